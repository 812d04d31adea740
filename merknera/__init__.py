"""Merknera: a self-hosted arena where programs play games against each other."""

__version__ = "0.1.0"
