"""A small rule-based model, so the demo and ``tickler chat`` work offline."""
