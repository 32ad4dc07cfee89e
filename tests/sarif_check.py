"""A structural check of SARIF 2.1.0 logs, for the tests (imported as ``sarif_check``).

The official schema (OASIS SARIF 2.1.0, ``sarif-schema-2.1.0.json``) is not vendored here: its
text is not ours to copy. Instead :data:`SCHEMA` restates, in the same JSON Schema keywords, the
facts of that schema for every object ``skills-core validate --format sarif`` emits: each
object's complete list of property names (the schema forbids any other: ``additionalProperties:
false``), its required properties, and the types, enums and bounds of the properties we set.
Properties we never set are listed with an empty schema (allowed, any value), so that a typo in a
name is still caught. :func:`check` is a small validator for the keywords used: ``$ref``,
``type``, ``enum``, ``required``, ``properties``, ``additionalProperties``, ``items``,
``minItems``, ``uniqueItems``, ``minimum``, ``maximum``, ``anyOf`` and ``format`` (``uri``: an
absolute URI; ``uri-reference``: RFC 3986 characters only).

GitHub code scanning adds its own demands, checked by :func:`check_code_scanning`: every result
has a ``ruleId`` naming a rule of the driver, a ``level``, and a location with an artifact URI
and a ``region.startLine``.
"""

from __future__ import annotations

import json
import re
from typing import Any

ANY: dict[str, Any] = {}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/definitions/{name}"}


def obj(
    properties: dict[str, dict[str, Any]],
    *,
    required: tuple[str, ...] = (),
    others: tuple[str, ...] = (),
) -> dict[str, Any]:
    """An object with ``additionalProperties: false``: ``properties`` checked, ``others`` allowed."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": {**properties, **dict.fromkeys(others, ANY)},
    }


def array(items: dict[str, Any], *, unique: bool = False, min_items: int = 0) -> dict[str, Any]:
    return {"type": "array", "items": items, "uniqueItems": unique, "minItems": min_items}


STRING: dict[str, Any] = {"type": "string"}
LEVEL: dict[str, Any] = {"enum": ["none", "note", "warning", "error"]}
INDEX: dict[str, Any] = {"type": "integer", "minimum": -1}

DEFINITIONS: dict[str, dict[str, Any]] = {
    "run": obj(
        {
            "tool": ref("tool"),
            "invocations": array(ref("invocation")),
            "originalUriBaseIds": {"type": "object", "additionalProperties": ref("artifactLocation")},
            "results": array(ref("result")),
            "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
            "properties": ref("propertyBag"),
        },
        required=("tool",),
        others=(
            "conversion", "language", "versionControlProvenance", "artifacts",
            "logicalLocations", "graphs", "automationDetails", "runAggregates", "baselineGuid",
            "redactionTokens", "defaultEncoding", "defaultSourceLanguage", "newlineSequences",
            "externalPropertyFileReferences", "threadFlowLocations", "taxonomies", "addresses",
            "translations", "policies", "webRequests", "webResponses", "specialLocations",
        ),
    ),
    "tool": obj(
        {"driver": ref("toolComponent"), "properties": ref("propertyBag")},
        required=("driver",),
        others=("extensions",),
    ),
    "toolComponent": obj(
        {
            "name": STRING,
            "version": STRING,
            "semanticVersion": STRING,
            "informationUri": {"type": "string", "format": "uri"},
            "rules": array(ref("reportingDescriptor"), unique=True),
            "properties": ref("propertyBag"),
        },
        required=("name",),
        others=(
            "guid", "organization", "product", "productSuite", "shortDescription",
            "fullDescription", "fullName", "dottedQuadFileVersion", "releaseDateUtc",
            "downloadUri", "globalMessageStrings", "notifications", "taxa", "locations",
            "language", "contents", "isComprehensive", "localizedDataSemanticVersion",
            "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent",
            "translationMetadata", "supportedTaxonomies",
        ),
    ),
    "reportingDescriptor": obj(
        {
            "id": STRING,
            "name": STRING,
            "shortDescription": ref("multiformatMessageString"),
            "fullDescription": ref("multiformatMessageString"),
            "help": ref("multiformatMessageString"),
            "helpUri": {"type": "string", "format": "uri"},
            "defaultConfiguration": ref("reportingConfiguration"),
            "properties": ref("propertyBag"),
        },
        required=("id",),
        others=(
            "deprecatedIds", "guid", "deprecatedGuids", "deprecatedNames", "messageStrings",
            "relationships",
        ),
    ),
    "multiformatMessageString": obj(
        {"text": STRING, "markdown": STRING, "properties": ref("propertyBag")}, required=("text",)
    ),
    "reportingConfiguration": obj(
        {
            "enabled": {"type": "boolean"},
            "level": LEVEL,
            "rank": {"type": "number", "minimum": -1, "maximum": 100},
            "properties": ref("propertyBag"),
        },
        others=("parameters",),
    ),
    "propertyBag": {
        "type": "object",
        "additionalProperties": True,
        "properties": {"tags": array(STRING, unique=True)},
    },
    "invocation": obj(
        {
            "executionSuccessful": {"type": "boolean"},
            "exitCode": {"type": "integer"},
            "toolExecutionNotifications": array(ref("notification")),
            "properties": ref("propertyBag"),
        },
        required=("executionSuccessful",),
        others=(
            "commandLine", "arguments", "responseFiles", "startTimeUtc", "endTimeUtc",
            "ruleConfigurationOverrides", "notificationConfigurationOverrides",
            "toolConfigurationNotifications",
            "exitCodeDescription", "exitSignalName", "exitSignalNumber",
            "processStartFailureMessage", "machine", "account", "processId",
            "executableLocation", "workingDirectory", "environmentVariables", "stdin", "stdout",
            "stderr", "stdoutStderr",
        ),
    ),
    "notification": obj(
        {"message": ref("message"), "level": LEVEL, "properties": ref("propertyBag")},
        required=("message",),
        others=("locations", "threadId", "timeUtc", "exception", "descriptor", "associatedRule"),
    ),
    "result": obj(
        {
            "ruleId": STRING,
            "ruleIndex": INDEX,
            "level": LEVEL,
            "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"]},
            "message": ref("message"),
            "locations": array(ref("location")),
            "partialFingerprints": {"type": "object", "additionalProperties": STRING},
            "properties": ref("propertyBag"),
        },
        required=("message",),
        others=(
            "rule", "analysisTarget", "guid", "correlationGuid", "occurrenceCount",
            "fingerprints", "stacks", "codeFlows", "graphs", "graphTraversals",
            "relatedLocations", "suppressions", "baselineState", "rank", "attachments",
            "hostedViewerUri", "workItemUris", "provenance", "fixes", "taxa", "webRequest",
            "webResponse",
        ),
    ),
    "message": {
        **obj(
            {
                "text": STRING,
                "markdown": STRING,
                "id": STRING,
                "arguments": array(STRING),
                "properties": ref("propertyBag"),
            }
        ),
        "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
    },
    "location": obj(
        {
            "id": INDEX,
            "physicalLocation": ref("physicalLocation"),
            "logicalLocations": array(ref("logicalLocation"), unique=True),
            "message": ref("message"),
            "properties": ref("propertyBag"),
        },
        others=("annotations", "relationships"),
    ),
    "logicalLocation": obj(
        {
            "name": STRING,
            "index": INDEX,
            "fullyQualifiedName": STRING,
            "decoratedName": STRING,
            "parentIndex": INDEX,
            "kind": STRING,
            "properties": ref("propertyBag"),
        }
    ),
    "physicalLocation": {
        **obj(
            {
                "artifactLocation": ref("artifactLocation"),
                "region": ref("region"),
                "contextRegion": ref("region"),
                "properties": ref("propertyBag"),
            },
            others=("address",),
        ),
        "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
    },
    "artifactLocation": obj(
        {
            "uri": {"type": "string", "format": "uri-reference"},
            "uriBaseId": STRING,
            "index": INDEX,
            "description": ref("message"),
            "properties": ref("propertyBag"),
        }
    ),
    "region": obj(
        {
            "startLine": {"type": "integer", "minimum": 1},
            "startColumn": {"type": "integer", "minimum": 1},
            "endLine": {"type": "integer", "minimum": 1},
            "endColumn": {"type": "integer", "minimum": 1},
            "charOffset": INDEX,
            "charLength": {"type": "integer", "minimum": 0},
            "byteOffset": INDEX,
            "byteLength": {"type": "integer", "minimum": 0},
            "message": ref("message"),
            "sourceLanguage": STRING,
            "properties": ref("propertyBag"),
        },
        others=("snippet",),
    ),
}  # fmt: skip

SCHEMA: dict[str, Any] = {
    **obj(
        {
            "$schema": {"type": "string", "format": "uri"},
            "version": {"enum": ["2.1.0"]},
            "runs": array(ref("run")),
            "properties": ref("propertyBag"),
        },
        required=("version", "runs"),
        others=("inlineExternalProperties",),
    ),
    "definitions": DEFINITIONS,
}

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
#: An absolute URI: a scheme, ":", then characters RFC 3986 allows.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_URI_REFERENCE = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def check(instance: Any, schema: dict[str, Any] = SCHEMA, where: str = "$") -> list[str]:
    """Every way ``instance`` breaks ``schema`` (a subset of JSON Schema draft 7), as messages."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return check(instance, DEFINITIONS[name], where)
    errors: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(instance, _TYPES[kind]) and not (
            kind in ("integer", "number") and isinstance(instance, bool)
        )
        if not ok:
            return [f"{where}: expected {kind}, got {type(instance).__name__}"]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{where}: {instance!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(instance, int | float) and instance < schema["minimum"]:
        errors.append(f"{where}: {instance} is below {schema['minimum']}")
    if "maximum" in schema and isinstance(instance, int | float) and instance > schema["maximum"]:
        errors.append(f"{where}: {instance} is above {schema['maximum']}")
    fmt = schema.get("format")
    if fmt is not None and isinstance(instance, str):
        pattern = _URI if fmt == "uri" else _URI_REFERENCE
        if pattern.fullmatch(instance) is None or _PERCENT.search(instance):
            errors.append(f"{where}: {instance!r} is not a {fmt}")
    for alternative in schema.get("anyOf", ()):
        if not check(instance, alternative, where):
            break
    else:
        if "anyOf" in schema:
            errors.append(f"{where}: matches none of {schema['anyOf']}")
    if isinstance(instance, dict):
        errors += [
            f"{where}: {key!r} is required"
            for key in schema.get("required", ())
            if key not in instance
        ]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if key in properties:
                errors += check(value, properties[key], f"{where}.{key}")
            elif extra is False:
                errors.append(f"{where}: property {key!r} is not allowed")
            elif isinstance(extra, dict):
                errors += check(value, extra, f"{where}.{key}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if schema.get("uniqueItems"):
            seen = [json.dumps(item, sort_keys=True) for item in instance]
            if len(set(seen)) != len(seen):
                errors.append(f"{where}: items are not unique")
        if "items" in schema:
            for number, item in enumerate(instance):
                errors += check(item, schema["items"], f"{where}[{number}]")
    return errors


def check_code_scanning(log: Any) -> list[str]:
    """What GitHub code scanning needs beyond the schema (module docstring)."""
    errors: list[str] = []
    for number, run in enumerate(log["runs"]):
        rules = run["tool"]["driver"].get("rules", [])
        ids = [rule["id"] for rule in rules]
        if len(set(ids)) != len(ids):
            errors.append(f"run {number}: rule ids repeat")
        for rule in rules:
            if not rule.get("shortDescription") or not (rule.get("help") or rule.get("helpUri")):
                errors.append(f"rule {rule['id']}: no description or help")
        for index, result in enumerate(run.get("results", [])):
            where = f"run {number} result {index}"
            rule_id = result.get("ruleId")
            if rule_id not in ids:
                errors.append(f"{where}: ruleId {rule_id!r} is not a rule of the driver")
            elif "ruleIndex" in result and ids[result["ruleIndex"]] != rule_id:
                errors.append(f"{where}: ruleIndex points at another rule")
            if "level" not in result:
                errors.append(f"{where}: no level")
            locations = result.get("locations") or []
            if not locations:
                errors.append(f"{where}: no location")
            for location in locations:
                physical = location.get("physicalLocation", {})
                if "uri" not in physical.get("artifactLocation", {}):
                    errors.append(f"{where}: no artifact URI")
                if "startLine" not in physical.get("region", {}):
                    errors.append(f"{where}: no region.startLine")
    return errors
