"""Models and running them: offline loading, batching, engines (local, Ray), the token-embedding cache, the dense vector store."""
