"""Text -> vectors (sentence-transformers, offline) and text -> token counts (tiktoken, offline).

Importing this package is cheap: torch and sentence-transformers load only when a model is first used.
"""

from embeddings.embedder import (
    Embedder,
    FakeEmbedder,
    PrecisionSwitching,
    RuntimeReporting,
    SentenceTransformerEmbedder,
    default_model_dir,
    precision_switching,
    runtime_reporting,
)
from embeddings.tokens import TokenCounter, estimate_tokens

__all__ = [
    "Embedder",
    "FakeEmbedder",
    "PrecisionSwitching",
    "RuntimeReporting",
    "SentenceTransformerEmbedder",
    "TokenCounter",
    "default_model_dir",
    "estimate_tokens",
    "precision_switching",
    "runtime_reporting",
]
