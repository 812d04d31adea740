"""Gateways: the other arenas' protocols, spoken on listeners of their own, so that their
clients play here unchanged against every other bot of the same game."""
