"""The dashboard (``tickler ui``): the page, its operator actions and the server that serves it."""
