"""Where a rule-based player moves: travel times to the rooms, on the empty board and around blocking tokens."""
