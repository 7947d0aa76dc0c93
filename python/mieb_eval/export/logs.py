"""Logging set-up shared by mieb-export and mieb-eval-model."""


def one_line_per_warning() -> None:
    """huggingface_hub gives its loggers a handler of their own and lets them propagate too, so
    each of its warnings (a download retry, say) would print twice: once bare, once through
    this program's prefixed handler. Keep the prefixed one."""
    try:
        from huggingface_hub.utils import logging as hf_logging
    except ImportError:
        return
    root = hf_logging.get_logger()  # configures the library's root logger, handler included
    for h in list(root.handlers):
        root.removeHandler(h)
