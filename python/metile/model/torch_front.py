"""metile.compile for torch models (torch.nn.Module, Hugging Face transformers)."""

CALL = "forward"
FRAMEWORK = "torch"


def is_model(model):
    return any(c.__module__.startswith("torch.nn") for c in type(model).__mro__)
