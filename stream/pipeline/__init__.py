"""The pipeline: one event batch -> net effect -> CSR -> structure phases -> jobs -> a BatchResult."""
from .pipeline import BatchResult, Pipeline, build_pipeline, check_pipeline_arguments

__all__ = ["BatchResult", "Pipeline", "build_pipeline", "check_pipeline_arguments"]
