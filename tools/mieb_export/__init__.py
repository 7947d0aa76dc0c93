"""mieb-export: export a model's MIEB embeddings and ground truth for mieb-eval, and replay them in mteb.

    from mieb_export import export, ReplayEncoder
    export(model, tasks, "out/task-data", "out/embeddings")     # model: an mteb encoder
    mteb.evaluate(ReplayEncoder("out/embeddings"), tasks)       # mteb scores the same vectors

The data contract is docs/FORMAT.md; see README.md "Exporting from mteb".
"""

from .export import REGISTRY_NAME, ModelMismatch, export

__all__ = ["REGISTRY_NAME", "ModelMismatch", "ReplayEncoder", "export"]


def __getattr__(name: str):  # the replay model imports mteb's model classes: load it on first use
    if name == "ReplayEncoder":
        from .replay import ReplayEncoder

        return ReplayEncoder
    raise AttributeError(name)
