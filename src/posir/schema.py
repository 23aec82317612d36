"""How every section of ``config.yaml`` is declared: typed, frozen entries, each written once.

A section is a pydantic model beside the code that reads it (``ModelSpec`` in :mod:`posir.models.declarations.spec`,
``ScorerSpec`` in :mod:`posir.scorers.spec`, ``PipelineSpec`` in :mod:`posir.rerank`, ...);
:class:`posir.config.WorkflowConfig` composes them into the whole file. From these declarations come the
defaults, the types, the allowed keys, the error messages and the JSON schema that Snakemake's ``validate``
and editors read (``schemas/config.schema.yaml``, written by ``python -m posir.config --write`` and kept
equal to the declarations by a test). Nothing else holds a default or a key list.

Errors are one sentence per problem: the key's path in ``config.yaml``, what is wrong with the value, and the
fix (:func:`explain`). Checks a type cannot express live in the declarations' validators and raise
:class:`KeyProblem` naming the key, so their messages carry the path too.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
)
from pydantic.json_schema import SkipJsonSchema

#: Names of benchmarks, models, sources, collections, ...: they become directory and file names and
#: Snakemake wildcards, so they stay within letters, digits, '.', '_' and '-'.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

# Scalars are strict: YAML's `true` is not the integer 1 and "5" is not 5 (pydantic's lax mode would take both).
Int = Annotated[int, Strict()]
Float = Annotated[float, Strict(), AllowInfNan(False)]
Bool = Annotated[bool, Strict()]
Str = Annotated[str, Strict()]
PositiveInt = Annotated[int, Strict(), Field(ge=1)]
#: a number kept as written: 3 stays the integer 3 (it is echoed into cards), 0.5 a float
Number = Int | Float
Weight = Annotated[Int | Float, Field(ge=0)]
Probability = Annotated[float, Strict(), Field(gt=0, lt=1)]
Name = Annotated[
    str,
    Strict(),
    StringConstraints(pattern=SAFE_NAME),
    Field(description="letters, digits, '.', '_' and '-', starting with a letter or digit"),
]
Language = Annotated[str, Strict(), StringConstraints(pattern=r"^[a-z]{3}$"), Field(description="ISO 639-3")]
SettingName = Annotated[
    str, Strict(), StringConstraints(pattern=r"^[a-z]{3}-[a-z]{3}$"), Field(description="<query>-<corpus> ISO 639-3")
]
Sha256 = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-fA-F]{64}$")]


def _without_credentials(url: str) -> str:
    from posir.remote import url_credentials

    found = url_credentials(url)
    if found:
        raise ValueError(
            f"the URL carries credentials ({', '.join(found)}); keys are read from the environment "
            f"only: remove them from the URL, export the key in an environment variable and name that "
            f"variable in api_key_env"
        )
    return url


HttpUrl = Annotated[str, Strict(), StringConstraints(pattern=r"^https?://"), AfterValidator(_without_credentials)]
#: the path part of an endpoint (appended to a base URL): no credentials in its query either
UrlPath = Annotated[str, Strict(), AfterValidator(lambda path: _without_credentials(f"http://host{path}") and path)]
EnvName = Annotated[
    str,
    Strict(),
    StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
    Field(description="the NAME of an environment variable holding the key, never the key"),
]

#: The rule of each constrained string in words, appended to a pattern error (a regular expression alone is no fix).
_PATTERN_WORDS = {
    SAFE_NAME: "letters, digits, '.', '_' and '-', starting with a letter or digit",
    r"^[a-z]{3}$": "an ISO 639-3 code such as eng",
    r"^[a-z]{3}-[a-z]{3}$": "<query>-<corpus> ISO 639-3 codes such as spa-eng",
    r"^[0-9a-fA-F]{64}$": "64 hexadecimal digits of a SHA-256",
    r"^https?://": "an http:// or https:// URL",
    r"^[A-Za-z_][A-Za-z0-9_]*$": "the NAME of an environment variable, such as MY_API_KEY",
}

#: Keys that would hold a secret: refused with a message that says where secrets go.
SECRET_KEYS = frozenset({"api_key", "apikey", "key", "token", "secret", "password"})


class ConfigError(ValueError):
    """A config value is wrong, inconsistent or refers to nothing; the message names the key and the fix."""


class KeyProblem(ValueError):
    """Raised by a declaration's validator: ``key`` (relative to the entry) is wrong; the message says why and
    what to do. :func:`explain` prefixes the entry's path, so the error reads ``models.x.dtype: ...``."""

    def __init__(self, key: str, problem: str, fix: str = "") -> None:
        self.key = key
        self.problem = problem if not fix else f"{problem}; {fix}"
        super().__init__(f"{key}: {self.problem}" if key else self.problem)


class Entry(BaseModel):
    """A typed, frozen config section: unknown keys, wrong types and bad values are errors naming the key.

    A field's docstring (the string under it) describes it in the JSON schema; it is read when the schema is
    written (:func:`describe_fields`), not when a class is made: pydantic's ``use_attribute_docstrings`` parses
    the source of every section at import, 0.3 s that every job of a run paid at its start.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    #: the exception type :meth:`from_config` raises (a subclass of ConfigError that callers already catch)
    error_type: ClassVar[type[ConfigError]] = ConfigError

    @classmethod
    def parse(cls, section: Mapping[str, Any] | None, where: str = "") -> Self:
        """Validate ``section`` (absent: all defaults); errors name ``<where>.<key>``."""
        data = {} if section is None else section
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise cls.error_type(explain(error, data, where, cls)) from None

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None, where: str = "") -> Self:
        return cls.parse(section, where)

    def as_data(self) -> dict[str, Any]:
        """Plain JSON-able data (for Snakemake params, which track only builtin values, and for cards)."""
        return self.model_dump(mode="json")


class NamedEntry(Entry):
    """An entry of a named section (``models.<name>``, ``scorers.<name>``, ...); the name is its key."""

    #: the section holding the entries, for messages: ``models``
    section: ClassVar[str] = ""

    name: SkipJsonSchema[str] = ""

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any] | None) -> Self:  # type: ignore[override]
        """Validate ``<section>.<name>``; errors name ``<section>.<name>.<key>``."""
        where = f"{cls.section}.{name}" if cls.section else name
        if isinstance(entry, Mapping) and "name" in entry:
            raise cls.error_type(f"config: {where}.name: an entry's name is its key in '{cls.section}'; remove it")
        return cls.parse(entry, where).model_copy(update={"name": name})


def named_entries(cls: type[NamedEntry], section: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every entry of a named section, each validated with its name."""
    return {name: cls.from_config(name, entry) for name, entry in (section or {}).items()}


# --- errors a person can act on ----------------------------------------------------------------------


def key_path(parts: Sequence[Any]) -> str:
    """``models.minilm-l6.batch_size``, ``evaluation[0].models``: how a person finds a key in config.yaml."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _user_path(loc: Sequence[Any], data: Any, root: Any = None) -> list[Any]:
    """``loc`` as a key path of config.yaml: without the tags pydantic inserts after a union's key
    (``scorers.x.bi-encoder.model`` is ``scorers.x.model``), found by walking the declarations beside the data."""
    path: list[Any] = []
    node, annotation = data, root
    for part in loc:
        if part == "[key]":
            break  # pydantic's marker of a mapping's key that failed: the path ends at that key
        if _is_tagged_union(annotation):
            annotation = _descend(annotation, part, node)
            continue  # ``part`` is the union's tag, not a key of the file
        path.append(part)
        annotation = _descend(annotation, part, node) if annotation is not None else None
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, (list, tuple)) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return path


def _is_tagged_union(annotation: Any) -> bool:
    import typing

    if typing.get_origin(annotation) is not typing.Annotated:
        return False
    inner, *metadata = typing.get_args(annotation)
    return typing.get_origin(inner) is typing.Union and any(getattr(m, "discriminator", None) for m in metadata)


def _model_at(root: type[BaseModel] | None, loc: Sequence[Any], data: Any) -> type[BaseModel] | None:
    """The model class whose field ``loc[-1]`` is (for the allowed keys of an unknown-key error)."""
    import types
    import typing

    cls: Any = root
    node = data
    for part in loc[:-1]:
        if cls is None:
            return None
        cls = _descend(cls, part, node)
        node = node.get(part) if isinstance(node, Mapping) else None
    cls = _unwrap(cls)
    if typing.get_origin(cls) in (typing.Union, types.UnionType):  # an optional section (``llm: LLMConfig | None``)
        models = [m for m in map(_unwrap, typing.get_args(cls)) if isinstance(m, type) and issubclass(m, BaseModel)]
        cls = models[0] if len(models) == 1 else None
    return cls if isinstance(cls, type) and issubclass(cls, BaseModel) else None


def _descend(annotation: Any, part: Any, node: Any) -> Any:
    """The annotation one step down ``part`` from ``annotation`` (a model, a dict, a union, Optional, Annotated)."""
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _descend(typing.get_args(annotation)[0], part, node)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        for member in members:  # the union member whose tag is ``part``, or the one that has the field
            inner = _unwrap(member)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                tag = _tag_of(inner)
                if tag is not None and tag == part:
                    return inner
                if isinstance(part, str) and _field_named(inner, part) is not None:
                    return _descend(inner, part, node)
            elif typing.get_origin(inner) in (dict, Mapping, list, tuple):
                return _descend(inner, part, node)
        return None
    if origin in (dict, Mapping):
        return typing.get_args(annotation)[1]
    if origin in (list, tuple):
        return typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = _field_named(annotation, part)
        if field is None:
            return annotation  # a union tag inside a chosen model: stay
        if field.discriminator is not None:  # a tagged union with a default keeps its tag in the field, not the type
            return Annotated[field.annotation, Field(discriminator=field.discriminator)]
        return field.annotation
    return None


def _field_named(model: type[BaseModel], key: Any) -> Any:
    """The field a config key reads: by its name, or by its alias (``translations`` is ``languages``)."""
    if not isinstance(key, str):
        return None
    if key in model.model_fields:
        return model.model_fields[key]
    return next((f for f in model.model_fields.values() if f.alias == key), None)
    return None


def _unwrap(annotation: Any) -> Any:
    import typing

    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _tag_of(model: type[BaseModel]) -> Any:
    import typing

    for key in ("backend", "builder", "by"):
        field = model.model_fields.get(key)
        if field is not None and typing.get_origin(field.annotation) is typing.Literal:
            values = typing.get_args(field.annotation)
            return values[0] if len(values) == 1 else None
    return None


def _allowed_keys(model: type[BaseModel] | None) -> list[str]:
    """The keys a person may write: aliases where a field has one, never fields the code sets
    (``name`` and ``language`` come from the entry's key; they are hidden from the schema)."""
    if model is None:
        return []
    return sorted((f.alias or k) for k, f in model.model_fields.items() if k != "name" and not _code_set(f))


def _code_set(field: Any) -> bool:
    return any(isinstance(m, SkipJsonSchema) or m is SkipJsonSchema for m in field.metadata)


def _describe(value: Any) -> str:
    if isinstance(value, str) and "://" in value:
        from posir.remote import redact_url

        value = redact_url(value)  # a URL may hold a key: never echo one
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_NAMES = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "dict_type": "a mapping of keys to values",
    "model_type": "a mapping of keys to values",
    "model_attributes_type": "a mapping of keys to values",
    "list_type": "a list",
    "tuple_type": "a list",
    "finite_number": "a finite number",
}


def describe_problem(error: Mapping[str, Any], model: type[BaseModel] | None = None) -> str:
    """What is wrong with one value, and what is allowed (one pydantic error, as a sentence)."""
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if error["loc"] and error["loc"][-1] == "api_key_env" and kind != "missing":
        # never echo it: a key pasted where the variable's name belongs must not reach a log
        return "must be the NAME of an environment variable holding the key, not the key itself (e.g. MY_API_KEY)"
    if kind == "value_error" and isinstance(ctx.get("error"), KeyProblem):
        return ctx["error"].problem
    if kind == "extra_forbidden":
        key = error["loc"][-1]
        if str(key).lower() in SECRET_KEYS:
            return (
                f"'{key}' is not allowed: keys and tokens are read from the environment only; remove it from the "
                f"config, export it in an environment variable and name that variable in 'api_key_env'"
            )
        allowed = _allowed_keys(model)
        return f"unknown key '{key}'" + (f"; allowed keys: {', '.join(allowed)}" if allowed else "")
    if kind == "missing":
        return "missing; add it"
    if kind == "literal_error":
        return f"{_describe(value)} is not allowed; allowed values: {ctx.get('expected', '')}".replace("'", "")
    if kind == "union_tag_invalid":
        expected = str(ctx.get("expected_tags", "")).replace("'", "")
        return f"{_describe(ctx.get('tag'))} is not allowed; allowed values: {expected}"
    if kind == "union_tag_not_found":
        return "missing; add it"
    if kind in _TYPE_NAMES:
        return f"{_describe(value)} is a {type(value).__name__}; expected {_TYPE_NAMES[kind]}"
    if kind == "string_pattern_mismatch":
        rule = _PATTERN_WORDS.get(str(ctx.get("pattern")))
        return f"{_describe(value)} does not match the pattern {ctx.get('pattern')}" + (f" ({rule})" if rule else "")
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than", "too_short", "too_long"):
        return f"{_describe(value)}: {error['msg'][0].lower()}{error['msg'][1:]}"
    message = str(error.get("msg", ""))
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def explain(error: ValidationError, data: Any, where: str = "", root: type[BaseModel] | None = None) -> str:
    """One sentence per problem: ``<key path>: <what is wrong>; <the fix>``, the first few problems."""
    lines = []
    for problem in error.errors(include_url=False)[:5]:
        path = _user_path(problem["loc"], data, root)
        context = problem.get("ctx") or {}
        if problem["type"] in ("union_tag_invalid", "union_tag_not_found"):
            path.append(str(context.get("discriminator", "")).strip("'"))  # the tag's own key: backend, builder
        if problem["type"] == "value_error" and isinstance(context.get("error"), KeyProblem):
            key = context["error"].key
            path += [part for part in key.split(".") if part]
        model = _model_at(root, problem["loc"], data) if root is not None else None
        prefix = ".".join(p for p in [where, key_path(path) if path else ""] if p) or "(top level)"
        lines.append(f"config: {prefix}: {describe_problem(problem, model)}")
    more = len(error.errors()) - len(lines)
    if more > 0:
        lines.append(f"(and {more} more problem(s))")
    return "\n".join(lines)


# --- field descriptions for the JSON schema ---------------------------------------------------------------------


@functools.cache
def attribute_docstrings(model: type) -> dict[str, str]:
    """The docstrings of a class's annotated attributes: the string statement right under ``name: type = ...``."""
    try:
        source = inspect.getsource(model)
    except (OSError, TypeError):
        return {}
    tree = ast.parse(inspect.cleandoc(source) if source[:1].isspace() else source)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for above, node in zip(body, body[1:]):
        if (
            isinstance(above, ast.AnnAssign)
            and isinstance(above.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs[above.target.id] = inspect.cleandoc(node.value.value)
    return docs


def _sections(root: type[BaseModel]) -> Iterator[type[BaseModel]]:
    seen: set[type] = set()
    pending = [root]
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        yield model
        pending.extend(model.__subclasses__())


_DESCRIBED: set[type[BaseModel]] = set()


def describe_fields(root: type[BaseModel] = Entry) -> None:
    """Give every field of ``root``'s subclasses its attribute docstring as description (once per process).

    What ``use_attribute_docstrings`` would have done at import, for the JSON schema only: a field takes the
    docstring of the class that declares it (a subclass that redeclares a field without one leaves it
    undescribed), a field already described keeps its description. Every class is then rebuilt from
    scratch, so a section that holds another carries the other's new descriptions.
    """
    if root in _DESCRIBED:
        return
    models = list(_sections(root))
    for model in models:
        for name, field in model.model_fields.items():
            owner = next((c for c in model.__mro__ if name in c.__dict__.get("__annotations__", {})), None)
            doc = attribute_docstrings(owner).get(name) if owner is not None else None
            if field.description is None and doc is not None:
                field.description = doc
    for model in models:
        # a cached schema would be embedded as it is in the sections holding it, descriptions missing
        if "__pydantic_core_schema__" in model.__dict__:
            type.__delattr__(model, "__pydantic_core_schema__")
    for model in models:
        model.model_rebuild(force=True)
    _DESCRIBED.add(root)
