"""Models and running them: loading encoders offline, batching, engines (local, Ray), the token-embedding cache and the dense vector store."""
