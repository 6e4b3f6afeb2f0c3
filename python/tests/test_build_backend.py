"""The package's own build backend (_specconf_build.py): what pip installs is the package, typed, with
metadata pip and importlib.metadata read; the Python 3.10 reading of pyproject.toml (no tomllib) agrees with
tomllib's."""
import base64
import hashlib
import importlib
import sys
import tempfile
import unittest
import zipfile
from unittest import mock

import _specconf_build as backend


class BuildBackendTest(unittest.TestCase):
    def test_the_wheel_holds_the_package_its_marker_and_a_record_of_every_file(self):
        with tempfile.TemporaryDirectory() as directory:
            name = backend.build_wheel(directory)
            self.assertEqual(name, "specconf_adapter-0.1.0-py3-none-any.whl")
            with zipfile.ZipFile(f"{directory}/{name}") as wheel:
                names = wheel.namelist()
                self.assertIn("specconf_adapter/py.typed", names)
                self.assertIn("specconf_adapter/trace.py", names)
                self.assertFalse([n for n in names if "tests" in n or "__pycache__" in n])
                record = wheel.read("specconf_adapter-0.1.0.dist-info/RECORD").decode().splitlines()
                for line in record:
                    path, digest, size = line.rsplit(",", 2)
                    if path.endswith("RECORD"):
                        continue
                    data = wheel.read(path)
                    expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), path)
                self.assertEqual(sorted(line.split(",")[0] for line in record), sorted(names))
                metadata = wheel.read("specconf_adapter-0.1.0.dist-info/METADATA").decode()
                self.assertIn("Requires-Python: >=3.10\n", metadata)
                self.assertNotIn("Requires-Dist", metadata)

    def test_the_editable_wheel_points_at_this_folder(self):
        with tempfile.TemporaryDirectory() as directory:
            with zipfile.ZipFile(f"{directory}/{backend.build_editable(directory)}") as wheel:
                pth = [n for n in wheel.namelist() if n.endswith(".pth")]
                self.assertEqual(wheel.read(pth[0]).decode().strip(), backend.ROOT)

    def test_without_tomllib_the_fields_read_are_tomllib_s(self):
        try:
            import tomllib  # noqa: F401
        except ImportError:
            self.skipTest("Python 3.10: no tomllib to compare with (the fallback is what runs here)")
        full = backend._project()
        with mock.patch.dict(sys.modules, {"tomllib": None}):
            importlib.reload(backend)
            reduced = backend._project()
        importlib.reload(backend)
        for key in ("name", "version", "description", "readme", "requires-python", "classifiers"):
            self.assertEqual(reduced[key], full[key], key)


if __name__ == "__main__":
    unittest.main()
