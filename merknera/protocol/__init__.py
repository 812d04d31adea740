"""The JSON-RPC envelope in Merknera's two dialects, call signing, and fault codes.

This package knows no game: it turns bytes into requests and replies and back.
"""
