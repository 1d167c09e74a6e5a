"""The middle end: the three-address IR, its analyses and its optimizer."""
