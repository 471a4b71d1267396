"""The worker (``tickler worker``): delivers the sessions no process holds, paced."""
