"""Human review of derived labels: the SQLite-backed session engine, queue order, stats and
export. No UI code lives here; front ends (semrel.cli.review_terminal) call into it."""
