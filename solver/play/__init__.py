"""Play: a whole game at the table (rounds, bids, the sand timer, scores) and the
daily puzzle's frozen calendar."""
