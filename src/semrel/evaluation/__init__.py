"""trec_eval-exact scoring: the measure registry, the metrics and evaluating run files."""
