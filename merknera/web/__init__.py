"""The platform's HTTP face for people: the JSON results API (pages come later)."""
