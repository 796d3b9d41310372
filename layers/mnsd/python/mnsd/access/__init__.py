"""Who may do what: RAM-style policies on keys, tokens and resources, and the decision for one call."""
