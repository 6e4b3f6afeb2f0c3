"""The examples (examples/*.py) on the package: their handshakes and error paths, run without their heavy
dependencies (torch and transformers are stood in for: this machine's python3 has neither)."""
import importlib.util
import pathlib
import sys
import unittest
from unittest import mock

from specconf_adapter import handle

from .helpers import request_message

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
HELLO = {"protocol": "specconf-engine", "version": 2, "hello": {"specconf": "0.1.0", "modelFormats": ["onnx", "hf", "gguf"]}}
HEAVY = ["torch", "transformers", "transformers.generation", "transformers.models", "transformers.models.llama",
         "transformers.models.llama.modeling_llama", "safetensors", "safetensors.torch"]


def stub():
    module = mock.MagicMock()
    module.__version__ = "stub"
    return module


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(sys.modules, {heavy: stub() for heavy in HEAVY}):
        spec.loader.exec_module(module)
    return module


class ExamplesTest(unittest.TestCase):
    def test_skeleton_handshakes_and_skips_every_case_until_wired(self):
        module = load("adapter_skeleton")
        hello = handle(module.MyEngine(), HELLO)["hello"]
        self.assertEqual(hello["capabilities"]["modelFormats"], ["hf"])
        answer = handle(module.MyEngine(), request_message(request_id=2))
        self.assertEqual(answer, {"requestId": 2, "error": "wire your engine in here", "unsupported": True})

    def test_hf_engine_declares_chains_of_the_mirror_and_the_eagle_head(self):
        module = load("hf_engine")
        capabilities = handle(module.HfEngine(None), HELLO)["hello"]["capabilities"]
        self.assertEqual(capabilities["drafts"], ["mirror", "eagle"])
        self.assertEqual((capabilities["maxTopk"], capabilities["maxBatch"]), (1, 8))

    def test_transformers_engine_declares_its_generation_modes_and_options(self):
        module = load("transformers_engine")
        engine = module.TransformersEngine("cpu", ["float32"])
        capabilities = handle(engine, HELLO)["hello"]["capabilities"]
        self.assertEqual(capabilities["drafts"], ["mirror", "truncated-mirror", "ngram"])
        self.assertEqual(capabilities["dtypes"], ["float32"])
        self.assertIn("logitBias", capabilities["sampling"])

    def test_toy_engine_handshake(self):
        sys.path.insert(0, str(EXAMPLES))
        try:
            module = load("toy_engine")
        finally:
            sys.path.remove(str(EXAMPLES))
        capabilities = handle(module.ToyEngine(), HELLO)["hello"]["capabilities"]
        self.assertIn("trace", capabilities["observes"])


if __name__ == "__main__":
    unittest.main()
