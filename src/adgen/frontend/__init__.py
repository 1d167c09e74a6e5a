"""The frontend: read a Python function (its source, its names) and lower it to the IR."""
