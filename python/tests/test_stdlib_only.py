import ast
import pathlib
import sys
import unittest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "specconf_adapter"


class StdlibOnlyTest(unittest.TestCase):
    def test_the_package_imports_nothing_but_the_standard_library_and_itself(self):
        foreign = []
        for path in sorted(PACKAGE.glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module]
                else:
                    continue
                foreign += [f"{path.name}: {name}" for name in names if name.split(".")[0] not in sys.stdlib_module_names]
        self.assertEqual(foreign, [])

    def test_it_parses_as_python_3_10(self):
        for path in sorted(PACKAGE.glob("*.py")):
            ast.parse(path.read_text(), str(path), feature_version=(3, 10))


if __name__ == "__main__":
    unittest.main()
