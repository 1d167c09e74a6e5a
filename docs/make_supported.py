"""Write docs/supported.md from adgen's rule registry: ``python docs/make_supported.py``."""

from pathlib import Path

from adgen.rules.listing import markdown

if __name__ == "__main__":
    page = Path(__file__).with_name("supported.md")
    page.write_text(markdown())
    print(f"wrote {page}")
