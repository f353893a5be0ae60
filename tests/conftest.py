import warnings

warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=DeprecationWarning)
