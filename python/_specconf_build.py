"""The build backend of specconf-adapter (PEP 517 wheels and sdists, PEP 660 editable installs), stdlib only.

Why not setuptools: pip builds in an isolated environment and installs the backend's requirements there from
PyPI, which specconf's CI (and many engine teams' CI boxes) cannot reach; a backend that needs nothing installs
anywhere pip runs. The package is pure Python: a wheel is its files plus the dist-info (METADATA, WHEEL, RECORD).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "specconf_adapter"
WHEEL_TAG = "py3-none-any"


def _project():
    """pyproject.toml's [project] table: tomllib where it exists (3.11+), else the few string fields we use."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as file:
        data = file.read()
    try:
        import tomllib
    except ImportError:  # Python 3.10: one `key = "value"` or `key = [...]` per field, as the file is written
        table = data.decode().split("[project]", 1)[1]
        project = {key: value for key, value in re.findall(r'^([\w-]+) = "([^"]*)"', table, re.M)}
        project["classifiers"] = re.findall(r'^  "([^"]*)",', table, re.M)
        return project
    return tomllib.loads(data.decode())["project"]


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        *(f"Classifier: {classifier}" for classifier in project.get("classifiers", [])),
        "Description-Content-Type: text/markdown",
    ]
    with open(os.path.join(ROOT, project["readme"]), encoding="utf-8") as file:
        return "\n".join(lines) + "\n\n" + file.read()


def _package_files():
    """(path in the archive, path on disk) of the package's modules and its py.typed marker, sorted."""
    directory = os.path.join(ROOT, PACKAGE)
    names = sorted(name for name in os.listdir(directory) if name.endswith(".py") or name == "py.typed")
    return [(f"{PACKAGE}/{name}", os.path.join(directory, name)) for name in names]


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, contents):
    """A wheel of `contents` ((archive path, bytes), package files first) plus the dist-info; returns its name."""
    project = _project()
    stem = f"{_dist_name(project)}-{project['version']}"
    info = f"{stem}.dist-info"
    contents = contents + [
        (f"{info}/METADATA", _metadata(project).encode()),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: _specconf_build\nRoot-Is-Purelib: true\nTag: {WHEEL_TAG}\n".encode()),
    ]
    record = [_record_line(path, data) for path, data in contents] + [f"{info}/RECORD,,"]
    name = f"{stem}-{WHEEL_TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in contents + [(f"{info}/RECORD", ("\n".join(record) + "\n").encode())]:
            wheel.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return name


def _read(path):
    with open(path, "rb") as file:
        return file.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(path, _read(disk)) for path, disk in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose one file is a .pth naming this folder: imports read the checkout's sources as they change
    (the folder's other entries, tests and this backend, become importable too)."""
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    stem = f"{_dist_name(project)}-{project['version']}"
    files = [("pyproject.toml", "pyproject.toml"), ("_specconf_build.py", "_specconf_build.py"),
             (project["readme"], project["readme"])]
    files += [(path, os.path.relpath(disk, ROOT)) for path, disk in _package_files()]
    name = f"{stem}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as sdist:
        entries = [(f"{stem}/PKG-INFO", _metadata(project).encode())]
        entries += [(f"{stem}/{path}", _read(os.path.join(ROOT, disk))) for path, disk in files]
        for path, data in entries:
            member = tarfile.TarInfo(path)
            member.size, member.mode = len(data), 0o644
            sdist.addfile(member, io.BytesIO(data))
    return name
