"""The BERTScore judge and the label rules that turn its scores into qrels."""
