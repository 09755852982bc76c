"""Templates: parametric accelerator families, their named dataflows and presets.

    import magnet as mg
    arch = mg.templates.simba(vector_width=8, vector_units=8, pe_rows=4, pe_cols=4)
    arch = mg.templates.package(chiplets_x=6, chiplets_y=6)  # any template, the same way
    arch = mg.load_arch("simba-chip")                  # a preset, a template name or a YAML file
    flow = mg.templates.dataflow_for(arch, "os-local-ws")
    mg.templates.get_template("simba").dataflows       # name -> description

A user template subclasses ``Template`` (``magnet.templates.template``) and is registered with
``register_template`` or through the entry-point group ``magnet.templates``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from magnet.arch.level_tree import arch_from_tree
from magnet.arch.spec import Arch
from magnet.arguments import Name, checked_call
from magnet.dataflow import Dataflow, load_dataflow
from magnet.errors import DesignInfeasible, MagnetError, clipped_repr
from magnet.files import no_such_name, path_kind, read_yaml
from magnet.templates.eyeriss import Eyeriss
from magnet.templates.package import Package
from magnet.templates.simba import Simba
from magnet.templates.systolic import Systolic
from magnet.templates.template import (
    Template,
    TemplateParams,
    get_template,
    presets,
    register_template,
    template_dataflow,
    templates,
    unregister_template,
)

BUILTIN: dict[str, type[Template[Any]]] = {
    "simba": Simba,
    "eyeriss": Eyeriss,
    "systolic": Systolic,
    "package": Package,
}


def _builder(template: str, params: str) -> Callable[..., Arch]:
    """``magnet.templates.NAME(name=..., **params)``: the design a built-in template builds
    from these parameters, checked by the template (an unknown parameter or a bad value is
    its ``MagnetError``, naming the parameter and what is allowed)."""

    def build(name: Name | None = None, **values: Any) -> Arch:
        return get_template(template).build(values, name=name)

    build.__name__ = build.__qualname__ = template  # pickled by name, as a module function
    build.__doc__ = (
        f"A {template}-template architecture named ``name`` (default: {template!r}); the "
        f"other keywords are its parameters (``{params}``: ``magnet archs`` lists them)."
    )
    return checked_call(build, f"templates.{template}()")


simba = _builder("simba", "magnet.templates.simba.SimbaParams")
eyeriss = _builder("eyeriss", "magnet.templates.eyeriss.EyerissParams")
systolic = _builder("systolic", "magnet.templates.systolic.SystolicParams")
package = _builder("package", "magnet.templates.package.PackageParams")


@checked_call
def load_arch(spec: str | Path) -> Arch:
    """``spec`` is a preset name (``simba-chip``), a template name, or a YAML file."""
    text = str(spec)
    known = presets()
    if text in known:
        template, params = known[text]
        return template.build(params, name=text, source=f"preset {text}")
    path = Path(text)
    if not text.strip():  # Path('') is the working folder: say what is wrong instead
        raise MagnetError(
            f"an empty architecture name; give a preset ({', '.join(known)}), a template "
            f"({', '.join(templates())}) or an architecture YAML file"
        )
    kind = None if no_such_name(path) else path_kind(path)  # a broken link, a loop: read_yaml
    if kind is None:
        if text in templates():
            return get_template(text).build({}, source=f"template {text}")
        raise MagnetError(
            f"no such file, preset or template; presets: {', '.join(known)}; "
            f"templates: {', '.join(templates())}",
            source=text,
        )
    if kind == "directory":
        raise MagnetError(
            "is a directory; give an architecture YAML file, a preset or a template",
            source=text,
        )
    return arch_from_data(read_yaml(path), text)  # which says what else a path is


@checked_call
def arch_from_data(data: Any, source: str) -> Arch:
    """An architecture from parsed YAML: ``template: NAME`` plus parameters, or a tree."""
    if not isinstance(data, dict):
        raise MagnetError(
            "expected a mapping: 'template: NAME' plus parameters, or 'levels:'", source=source
        )
    if "template" in data:
        params = {k: v for k, v in data.items() if k not in ("template", "name")}
        template = get_template(str(data["template"]), source=source)
        name = data.get("name")
        if name is not None and not (isinstance(name, str) and name.strip()):
            raise MagnetError(
                f"expected text that is not empty (quote a number: name: '5'), got "
                f"{clipped_repr(name)}",
                source=source,
                field="name",
            )
        return template.build(params, name=name, source=source)
    if "levels" not in data:
        raise MagnetError(
            f"give 'template: NAME' ({', '.join(templates())}) or a 'levels:' list",
            source=source,
        )
    return arch_from_tree(data, source)


@checked_call
def arch_to_data(arch: Arch) -> dict[str, Any]:
    """The YAML that rebuilds ``arch`` (``template`` + parameters), for downloads and reports."""
    if arch.template is None or arch.params is None:
        return arch.model_dump(mode="json", exclude={"template", "params"}, exclude_defaults=True)
    return {"template": arch.template, "name": arch.name, **arch.params}


#: A dataflow as the API takes it: a name of the arch's template, a YAML file, a ``Dataflow``,
#: or None (``free``).
DataflowSpec = str | Path | Dataflow | None


@checked_call
def dataflow_for(arch: Arch, spec: DataflowSpec) -> Dataflow:
    """A named dataflow of ``arch``'s template, a YAML file, or ``free`` when None (the
    template's hardware rules, or no rules when the template defines no ``free``)."""
    if isinstance(spec, Dataflow):
        spec.check(arch)
        return spec
    if spec is None and (
        arch.template is None or "free" not in get_template(arch.template).dataflows
    ):
        return Dataflow(name="free", description="no rules")
    name = "free" if spec is None else str(spec)
    if name.endswith((".yaml", ".yml")) or path_kind(name) == "file":
        flow = load_dataflow(name)
        flow.check(arch, name)
        return flow
    if arch.template is not None:
        template = get_template(arch.template)
        flow = template_dataflow(template, arch, name)
        if name == "free":  # free contains every named dataflow: its search covers theirs
            flow = flow.model_copy(update={"includes": _named_dataflows(template, arch)})
        return flow
    if name == "free":
        return Dataflow(name="free", description="no rules")
    raise MagnetError(
        f"named dataflows need a template architecture; {arch.name!r} is an explicit tree: "
        "use 'free' or a dataflow YAML file",
        field="--dataflow",
    )


def _named_dataflows(template: Template[Any], arch: Arch) -> tuple[Dataflow, ...]:
    """The template's named dataflows that can run on ``arch`` (not ``free``)."""
    out = []
    for other in template.dataflows:
        if other != "free":
            try:
                out.append(template_dataflow(template, arch, other))
            except DesignInfeasible:
                continue  # e.g. a dataflow that holds data in a collector arch lacks
    return tuple(out)


__all__ = [
    "BUILTIN",
    "DataflowSpec",
    "Template",
    "TemplateParams",
    "arch_from_data",
    "arch_to_data",
    "dataflow_for",
    "eyeriss",
    "get_template",
    "load_arch",
    "package",
    "presets",
    "register_template",
    "simba",
    "systolic",
    "template_dataflow",
    "templates",
    "unregister_template",
]
