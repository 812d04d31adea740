-- Results waiting to be rated (merknera.store.ratings.rate_queued).  A game that ends with
-- a result is queued here in the transaction that stores the result, and rated shortly
-- after, with the other results of that moment, in the order of finish: a result and its
-- place in the queue commit together, so a crash between the two loses no rating.
CREATE TABLE rating_queue (
    game_id  INTEGER PRIMARY KEY REFERENCES games (id)
);
