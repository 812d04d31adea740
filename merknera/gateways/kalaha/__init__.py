"""The Kalaha board API (``Anna87/kalaha``; research part (d)), for its clients and for
people to play the platform's Kalaha bots.  So far: its wire (:mod:`.api`)."""
