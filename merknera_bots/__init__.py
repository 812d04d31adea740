"""Reference bots for the Merknera platform.

``merknera_bots.kit`` is the small JSON-RPC server and registration client that every
reference bot uses; it depends on nothing in ``merknera`` so a bot author can copy it as it
is. One module per game (``merknera_bots.tictactoe``, ...) holds that game's strategies and
its command line.
"""
