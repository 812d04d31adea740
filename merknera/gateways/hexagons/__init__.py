"""The MebiPenny 2011 hexagons server's API (``seeds/001_*``; research part (c)), for its
clients to play the platform's Hexagons games.  So far: its wire (:mod:`.wire`)."""
