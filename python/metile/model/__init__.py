"""metile.compile(model): whole models, MLX (mlx.nn.Module, mlx-lm) and torch (torch.nn.Module,
Hugging Face transformers), under the guarded runtime (docs/models.md)."""

from .compiled import CompiledModel, compile_model
from .dynamo_backend import torch_backend

__all__ = ["CompiledModel", "compile_model", "torch_backend"]
