#!/usr/bin/env python3
"""Generates Slipstream's command capture (deep copy and replay of vkCmd* calls) from vk.xml.

Outputs (into --out-dir):
  capture_commands.h    one record struct per capturable command (its arguments, pointers
                        into the command buffer's arena), the capture function the vkCmd*
                        wrappers call, replay_record() and copy_root() for vkBeginCommandBuffer
  capture_commands.cpp  the deep copies: one per structure reachable from a capturable
                        command (arrays by `len`, nested structures, null-terminated strings,
                        sized void buffers, and pNext chains: each sType that vk.xml's
                        `structextends` allows, copied with its own deep copy; any other
                        sType fails the copy, which makes the command buffer non-capturable)
  capture_test.inl      for tests/unit only: a filler and a deep comparison for each of those
                        structures, a recording dispatch table, one round-trip case per
                        capturable command

What is capturable is the allow-list CAPTURABLE in vk_registry.py (compute and transfer work, the state and
synchronization it needs, debug labels, timestamps), matched against vk.xml's base command names
(promoted aliases follow their base). Each allowed command must also, by vk.xml: run on compute
or transfer queues, not be an indirection (secondary command buffers), be declared without a
platform or beta guard, and have only arguments this generator can copy completely; otherwise
generation fails, so the list cannot silently drift from the registry. Everything else is
non-capturable: the wrappers then mark the command buffer non-fusable (plain pass-through).

Left out on purpose (see DEFERRED): vkCmdPushDescriptorSetWithTemplateKHR (pData's size is
not in vk.xml; it has to be computed by walking the template's create info, which Slipstream
does not record yet), vkCmdBeginQuery / vkCmdEndQuery (the pool's query type is unknown at
capture time, and performance queries must stay first in their command buffer), blits and
resolves (graphics queues only), vkCmdSetDeviceMask (device masks are passed through).

vk.xml is read through the registry's own model, reg.py (beside vk.xml), whose
validextensionstructs lists, from `structextends`, which structures may extend which.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402
from vk_registry import CAPTURABLE  # noqa: E402

# --- What is capturable: vk_registry.CAPTURABLE (gen_commands.py reads it too) -------------
# Commands the issue names that this step leaves non-capturable, and why.
DEFERRED = {
    "vkCmdPushDescriptorSetWithTemplateKHR":
        "pData's size is not in vk.xml: it must be computed from the template's create info",
    "vkCmdBeginQuery": "the query pool's type is not known at capture time",
    "vkCmdEndQuery": "the query pool's type is not known at capture time",
}

# --- What vk.xml leaves to the spec's prose -------------------------------------------------
# Pointers marked noautovalidity are valid only under conditions vk.xml does not encode.
# Each one reachable from a capturable command needs a rule here: "always" (valid whenever
# the structure is), "never" (not copied: the copy holds null), or a C++ condition over the
# owning structure ({s} stands for "owner." or, for a command parameter, nothing); the
# predicates live in src/capture/capture/capture_rules.h.
MEMBER_RULES = {
    ("vkCmdClearColorImage", "pColor"): "always",
    ("VkWriteDescriptorSet", "pImageInfo"): "descriptor_uses_image_info({s}descriptorType)",
    ("VkWriteDescriptorSet", "pBufferInfo"): "descriptor_uses_buffer_info({s}descriptorType)",
    ("VkWriteDescriptorSet", "pTexelBufferView"): "descriptor_uses_texel_buffer_view({s}descriptorType)",
    # Read only for secondary command buffers: CommandCapture::begin copies it itself.
    ("VkCommandBufferBeginInfo", "pInheritanceInfo"): "never",
}
# Conditions a structure must meet to be copied at all (else the copy fails): values whose
# meaning this generator's rules do not know (a descriptor type newer than vk.xml).
STRUCT_GUARDS = {
    "VkWriteDescriptorSet": "descriptor_type_known({s}descriptorType)",
}
# Structures copied for vkBeginCommandBuffer (CommandCapture::begin), beside the commands.
ROOT_STRUCTS = ["VkCommandBufferBeginInfo", "VkCommandBufferInheritanceInfo"]
# For the round-trip test: members whose value decides which other members are read get
# these values in turn (so every branch of MEMBER_RULES is exercised).
TEST_VALUES = {
    ("VkWriteDescriptorSet", "descriptorType"): [
        "VK_DESCRIPTOR_TYPE_SAMPLER", "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE", "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
        "VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER", "VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER",
        "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER", "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC", "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC",
        "VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT", "VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK",
        "VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR", "VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_NV",
        "VK_DESCRIPTOR_TYPE_SAMPLE_WEIGHT_IMAGE_QCOM", "VK_DESCRIPTOR_TYPE_BLOCK_MATCH_IMAGE_QCOM",
    ],
}

BANNER = vk_registry.banner("gen_capture.py")


class NotCopyable(Exception):
    """Why a structure or command cannot be deep-copied completely."""


class Decl:
    """One <member> or <param>: its C declaration split around the name, and its attributes."""

    def __init__(self, elem):
        self.name = elem.find("name").text
        self.type = elem.find("type").text
        before, after, seen_name = [elem.text or ""], [], False
        for child in elem:
            if child.tag == "name":
                seen_name = True
            elif child.tag != "comment":
                (after if seen_name else before).append(child.text or "")
            (after if seen_name else before).append(child.tail or "")
        self.prefix = " ".join("".join(before).split())  # "const VkBufferCopy*"
        self.suffix = "".join("".join(after).split())     # "[4]", ":8" or ""
        self.pointers = self.prefix.count("*")
        self.array = self.suffix.startswith("[")
        self.bitfield = self.suffix.startswith(":")
        length = elem.get("altlen") or elem.get("len")
        self.len = length.split(",") if length else []
        self.optional = (elem.get("optional") or "").split(",")
        self.noautovalidity = elem.get("noautovalidity") == "true"
        self.values = elem.get("values")

    def declare(self, name=None):
        return f"{self.prefix} {name or self.name}{self.suffix}"

    @property
    def pointer_is_optional(self):
        return self.optional[0] == "true" if self.pointers else False

    @property
    def count_is_optional(self):
        return self.optional[0] == "true"


def subst_names(expr, names, prefix):
    """Prefixes the identifiers of `expr` that name a sibling member or parameter."""
    return re.sub(r"(?<![\w.>])([A-Za-z_]\w*)",
                  lambda m: prefix + m.group(1) if m.group(1) in names else m.group(1), expr)


class Member:
    """How one member (or parameter) is copied: kind is value, nested, pnext, string, bytes,
    array, single or skip; count is the C++ element count for bytes and arrays, with {s}
    standing for the owner prefix; condition says when the pointer is valid (None: always)."""

    def __init__(self, decl, kind, elem_type=None, count=None, condition=None):
        self.decl, self.kind, self.elem_type, self.count, self.condition = decl, kind, elem_type, count, condition

    @property
    def name(self):
        return self.decl.name


class Struct:
    def __init__(self, name, elem):
        self.name = name
        self.elem = elem
        self.category = elem.get("category")
        self.members = []       # Member, in declaration order
        self.stype = None       # VK_STRUCTURE_TYPE_... for structures with sType
        self.extenders = []     # structures whose copy the pNext chain knows
        self.not_extending = []  # (name, why) of structextends children the chain rejects
        self.deep = False       # whether a byte copy is not enough
        self.guard = STRUCT_GUARDS.get(name)
        self.has_pnext = False


class Model:
    """The structures and commands the capture needs, with how each member is copied."""

    def __init__(self, r, type_guard):
        self.r = r
        self.type_guard = type_guard  # vk_registry.Registry.guards("type")
        self.structs = {}       # name -> Struct (copyable ones, in dependency order)
        self.failed = {}        # name -> why not copyable
        self.in_progress = set()

    def canonical(self, name):
        info = self.r.typedict.get(name)
        while info is not None and info.elem.get("alias"):
            name = info.elem.get("alias")
            info = self.r.typedict.get(name)
        return name

    def category(self, name):
        info = self.r.typedict.get(self.canonical(name))
        return info.elem.get("category") if info is not None else None

    def is_aggregate(self, name):
        return self.category(name) in ("struct", "union")

    def struct(self, name):
        """The copy plan of structure `name`; raises NotCopyable."""
        name = self.canonical(name)
        if name in self.structs:
            return self.structs[name]
        if name in self.failed:
            raise NotCopyable(self.failed[name])
        if name in self.in_progress:
            raise NotCopyable(f"{name} contains itself")
        self.in_progress.add(name)
        try:
            s = self.plan_struct(name)
        except NotCopyable as e:
            self.failed[name] = str(e)
            raise
        finally:
            self.in_progress.discard(name)
        self.structs[name] = s
        return s

    def plan_struct(self, name):
        info = self.r.typedict[name]
        s = Struct(name, info.elem)
        if self.type_guard.get(name) is not None:
            raise NotCopyable(f"{name} is declared only under #ifdef {self.type_guard[name]}")
        decls = [Decl(m) for m in info.elem.findall("member")]
        siblings = {d.name for d in decls}
        for d in decls:
            if d.name == "sType" and d.values:
                s.stype = d.values
            m = self.plan_member(name, d, siblings, "{s}")
            if s.category == "union" and m.kind != "value":
                raise NotCopyable(f"union {name} holds a pointer ({d.name})")
            if m.kind == "pnext":
                s.has_pnext = True
            if m.kind != "value":
                s.deep = True
            s.members.append(m)
        if s.has_pnext:
            for ext in self.r.validextensionstructs.get(name, []):
                try:
                    e = self.struct(ext)
                    if not e.stype:
                        raise NotCopyable(f"{ext} has no sType value")
                    s.extenders.append(e)
                except NotCopyable as why:
                    s.not_extending.append((ext, str(why)))
        return s

    def plan_member(self, owner, d, siblings, prefix):
        where = f"{owner}::{d.name}"
        if d.bitfield:
            raise NotCopyable(f"{where} is a bit-field")
        cat = self.category(d.type)
        if cat == "funcpointer":
            raise NotCopyable(f"{where} is a function pointer")
        if d.pointers == 0:
            if self.is_aggregate(d.type):
                sub = self.struct(d.type)
                if sub.deep:
                    if d.array:
                        raise NotCopyable(f"{where} is a fixed array of structures that point to memory")
                    return Member(d, "nested", elem_type=sub.name)
            return Member(d, "value")
        condition = None
        if d.noautovalidity and d.name != "pNext":
            rule = MEMBER_RULES.get((owner, d.name))
            if rule is None:
                raise NotCopyable(f"{where} is valid only under conditions vk.xml does not "
                                  "give (noautovalidity) and MEMBER_RULES has no rule for it")
            if rule == "never":
                return Member(d, "skip")
            if rule != "always":
                condition = rule
        if d.pointers > 1:
            raise NotCopyable(f"{where} is a pointer to pointers")
        if d.name == "pNext":
            return Member(d, "pnext")
        if not d.prefix.startswith("const"):
            raise NotCopyable(f"{where} is a non-const pointer (an output)")
        if d.type == "char" and d.len[:1] == ["null-terminated"]:
            return Member(d, "string", condition=condition)
        count = None
        if d.len:
            if len(d.len) > 1 or d.len[0] == "null-terminated":
                raise NotCopyable(f"{where} has a len this generator does not know: {','.join(d.len)}")
            if d.len[0].startswith("latexmath"):
                raise NotCopyable(f"{where}'s len is LaTeX without altlen")
            count = subst_names(d.len[0], siblings, prefix)
        if d.type == "void":
            if count is None:
                raise NotCopyable(f"{where} is untyped memory of no size vk.xml gives")
            return Member(d, "bytes", count=count, condition=condition)
        elem_type = self.canonical(d.type)
        if self.is_aggregate(d.type):
            self.struct(d.type)
        elif cat in ("handle", "enum", "bitmask", "basetype", None):
            pass
        else:
            raise NotCopyable(f"{where} points to a {cat}")
        if count is None:
            return Member(d, "single", elem_type=elem_type, condition=condition)
        return Member(d, "array", elem_type=elem_type, count=count, condition=condition)


class Command:
    def __init__(self, name, base, elem, group):
        self.name, self.base, self.group = name, base, group
        self.fn = name[2:]                    # CommandId and dispatch-table member
        self.capture_fn = base[2:]            # capture function and record (shared by aliases)
        self.record = f"{base[2:]}Record"
        params = [Decl(p) for p in elem.findall("param")]
        self.cb, self.params = params[0], params[1:]
        self.members = []
        self.ret = "".join(elem.find("proto").itertext()).strip()[: -len(base)].strip()


def plan_commands(r, model, present):
    """The capturable commands (each name, aliases too) and, for the docs, the rest."""
    aliases = {}
    for name, info in r.cmddict.items():
        if info.elem.get("alias"):
            aliases[name] = info.elem.get("alias")

    def base_of(name):
        while name in aliases:
            name = aliases[name]
        return name

    rules = [(what, re.compile(rx)) for what, rx in CAPTURABLE]
    commands, problems = [], []
    for name in sorted(n for n in present if n.startswith("vkCmd")):
        base = base_of(name)
        group = next((what for what, rx in rules if rx.fullmatch(base)), None)
        if group is None:
            continue
        elem = r.cmddict[base].elem
        c = Command(name, base, elem, group)
        queues = (elem.get("queues") or "").split(",")
        if not {"compute", "transfer"} & set(queues):
            problems.append(f"{name}: runs on neither compute nor transfer queues ({elem.get('queues')})")
        if "indirection" in (elem.get("tasks") or ""):
            problems.append(f"{name}: an indirection command")
        if present[name] is not None:
            problems.append(f"{name}: declared only under #ifdef {present[name]}")
        if c.ret != "void":
            problems.append(f"{name}: returns {c.ret}")
        if c.cb.type != "VkCommandBuffer":
            problems.append(f"{name}: first parameter is not a VkCommandBuffer")
        names = {p.name for p in c.params}
        if any(p.array for p in c.params):
            problems.append(f"{name}: a fixed-size array parameter")
        try:
            for p in c.params:
                m = model.plan_member(base, p, names, "{s}")
                if m.kind == "pnext":
                    raise NotCopyable(f"{base}::{p.name}: a command parameter named pNext")
                c.members.append(m)
        except NotCopyable as e:
            problems.append(f"{name}: {e}")
        commands.append(c)
    for name in DEFERRED:
        if any(c.base == name for c in commands):
            problems.append(f"{name} is both allowed and DEFERRED")
    if problems:
        vk_registry.fail("gen_capture.py", "the allow-list names commands it cannot capture:\n  " + "\n  ".join(problems))
    return commands


# --- Emitting the engine's code ---------------------------------------------------------------
def fmt(expr, prefix):
    return expr.replace("{s}", prefix)


def copy_member_lines(m, src, dst, prefix, fail):
    """C++ lines copying member `m` from `src`+name to `dst`+name; `prefix` replaces {s} in
    counts and conditions; `fail` is the statement run when a copy fails."""
    s, d = f"{src}{m.name}", f"{dst}{m.name}"
    if m.kind == "value":
        return []
    if m.kind == "skip":
        return [f"{d} = nullptr;"]
    if m.kind == "nested":
        return [f"if (!Deep<{m.elem_type}>::copy(a, {d}, {s})) {fail}"]
    if m.kind == "string":
        call = f"copy_string(a, {s}, {d})"
    elif m.kind == "bytes":
        call = f"copy_bytes(a, {s}, {fmt(m.count, prefix)}, {d})"
    elif m.kind == "array":
        call = f"copy_array(a, {s}, {fmt(m.count, prefix)}, {d})"
    elif m.kind == "single":
        call = f"copy_array(a, {s}, {s} ? 1 : 0, {d})"
    else:
        raise AssertionError(m.kind)
    line = f"if (!{call}) {fail}"
    if m.condition:
        return [f"if ({fmt(m.condition, prefix)}) {{", f"    {line}", "} else {", f"    {d} = nullptr;", "}"]
    return [line]


def emit_engine(model, commands, out_dir):
    structs = list(model.structs.values())
    deep = [s for s in structs if s.deep]
    h = [BANNER, "// Record structs and capture functions of the capturable vkCmd* commands.\n",
         "#pragma once\n\n", '#include "capture/command_capture.h"\n\n',
         "namespace slipstream::capture {\n\n"]
    by_record = {}
    for c in commands:
        by_record.setdefault(c.record, []).append(c)
    for record, group in by_record.items():
        c = group[0]
        names = ", ".join(x.name for x in group)
        h.append(f"// {names} ({c.group})\n")
        h.append(f"struct {record} : CaptureRecord {{\n")
        for p in c.params:
            h.append(f"    {p.declare()};\n")
        h.append("};\n")
        params = "".join(f", {p.declare()}" for p in c.params)
        h.append(f"void {c.capture_fn}(CommandCapture& c, CommandId id{params});\n\n")
    h += ["// Calls the dispatch-table member of record.id on `cb` with the record's arguments.\n",
          "void replay_record(const VkLayerDispatchTable& d, VkCommandBuffer cb, const CaptureRecord& record);\n\n",
          "// Deep copies of what vkBeginCommandBuffer passes (false: a structure it cannot copy).\n"]
    for root in ROOT_STRUCTS:
        h.append(f"bool copy_root(CaptureArena& a, const {root}* src, {root}*& dst);\n")
    h.append("\n}  // namespace slipstream::capture\n")

    cpp = [BANNER, '#include "capture_commands.h"\n\n', '#include "capture/capture_rules.h"\n',
           '#include "capture/deep_copy.h"\n\n', "namespace slipstream::capture {\n",
           "namespace detail {\n\n",
            "// --- Deep<T>: the structures that point to more memory -----------------------\n"]
    for s in deep:
        cpp += [f"template <> struct Deep<{s.name}> {{\n",
                "    static constexpr bool kNeeded = true;\n",
                f"    static bool copy(CaptureArena& a, {s.name}& dst, const {s.name}& src);\n",
                f"    static bool copy_members(CaptureArena& a, {s.name}& dst, const {s.name}& src);\n",
                "};\n"]
    cpp.append("\n")
    for s in deep:
        if s.has_pnext:
            cpp.append(f"bool copy_chain_{s.name}(CaptureArena& a, const void* src, void*& dst);\n")
    cpp.append("\n")
    for s in deep:
        cpp.append(f"bool Deep<{s.name}>::copy(CaptureArena& a, {s.name}& dst, const {s.name}& src) {{\n")
        if s.has_pnext:
            cpp += ["    void* chain = nullptr;\n",
                    f"    if (!copy_chain_{s.name}(a, src.pNext, chain)) return false;\n",
                    "    dst.pNext = chain;\n"]
        cpp.append("    return copy_members(a, dst, src);\n}\n\n")
        body = []
        if s.guard:
            body.append(f"if (!({fmt(s.guard, 'src.')})) return false;")
        for m in s.members:
            if m.kind != "pnext":
                body += copy_member_lines(m, "src.", "dst.", "src.", "return false;")
        if body:
            args = (f"[[maybe_unused]] CaptureArena& a, [[maybe_unused]] {s.name}& dst, "
                    f"[[maybe_unused]] const {s.name}& src")
        else:
            args = f"CaptureArena&, {s.name}&, const {s.name}&"
        cpp.append(f"bool Deep<{s.name}>::copy_members({args}) {{\n")
        cpp += [f"    {line}\n" for line in body]
        cpp.append("    return true;\n}\n\n")
        if s.has_pnext:
            cpp += [f"// The structures that may extend {s.name} (vk.xml structextends).\n"]
            for name, why in s.not_extending:
                cpp.append(f"// Not copied, so fails the copy: {name}: {why}.\n")
            if not s.extenders:
                cpp += [f"bool copy_chain_{s.name}(CaptureArena&, const void* src, void*& dst) {{\n",
                        "    dst = nullptr;\n",
                        "    return src == nullptr;  // nothing may extend it: any sType is unknown\n}\n\n"]
                continue
            cpp += [f"bool copy_chain_{s.name}(CaptureArena& a, const void* src, void*& dst) {{\n",
                    "    ChainBuilder chain;\n",
                    "    for (auto* in = static_cast<const VkBaseInStructure*>(src); in; in = in->pNext) {\n",
                    "        void* node = nullptr;\n",
                    "        switch (in->sType) {\n"]
            for e in s.extenders:
                cpp.append(f"        case {e.stype}: node = copy_node(a, *reinterpret_cast<const {e.name}*>(in)); break;\n")
            cpp += ["        default: return false;  // an sType Slipstream cannot copy: rule 6\n",
                    "        }\n",
                    "        if (!node) return false;\n",
                    "        chain.append(node);\n",
                    "    }\n",
                    "    dst = chain.head;\n",
                    "    return true;\n}\n\n"]
    cpp.append("}  // namespace detail\n\nusing namespace detail;\n\n")
    for root in ROOT_STRUCTS:
        cpp += [f"bool copy_root(CaptureArena& a, const {root}* src, {root}*& dst) {{\n",
                "    return copy_array(a, src, src ? 1 : 0, dst);\n}\n\n"]
    for record, group in by_record.items():
        c = group[0]
        params = "".join(f", {p.declare()}" for p in c.params)
        body = [f"    auto* r = c.new_record<{record}>(id);\n", "    if (!r) return;\n"]
        # Values are stored as they are; pointers get their deep copies below.
        body += [f"    r->{m.name} = {m.name};\n" for m in c.members if m.kind == "value"]
        copies = []
        for m in c.members:
            copies += copy_member_lines(m, "", "r->", "", "return c.fail(id);")
        if copies:
            body.append("    CaptureArena& a = c.arena();\n")
            body += [f"    {line}\n" for line in copies]
        body.append("    c.append(r);\n")
        cpp.append(f"void {c.capture_fn}(CommandCapture& c, CommandId id{params}) {{\n")
        cpp += body
        cpp.append("}\n\n")
    cpp += ["void replay_record(const VkLayerDispatchTable& d, VkCommandBuffer cb, const CaptureRecord& record) {\n",
            "    switch (record.id) {\n"]
    for c in commands:
        args = "".join(f", r.{p.name}" for p in c.params)
        cpp += [f"    case CommandId::{c.fn}: {{\n",
                f"        const auto& r = static_cast<const {c.record}&>(record);\n" if c.params else "",
                f"        d.{c.fn}(cb{args});\n", "        return;\n", "    }\n"]
    cpp += ["    default:\n", "        return;  // never captured (kCommandInfo[id].capturable is false)\n", "    }\n}\n\n",
            "}  // namespace slipstream::capture\n"]

    vk_registry.write(out_dir, "capture_commands.h", h)
    vk_registry.write(out_dir, "capture_commands.cpp", cpp)


# --- Emitting the round-trip test's helpers ----------------------------------------------------
def fill_member_lines(model, owner, m, obj, prefix, count_members):
    """Lines filling member m of `obj` (e.g. "s." or "r.") with distinct values."""
    d, t = m.decl, m.decl.type
    x = f"{obj}{m.name}"
    if m.kind == "pnext":
        return []  # the caller builds the chain
    if m.kind == "skip":
        return [f"{x} = nullptr;"]
    if m.kind == "value":
        if d.name == "sType":
            return []
        test_values = TEST_VALUES.get((owner, d.name))
        if test_values:
            return [f"{x} = f.pick<{t}>({{{', '.join(test_values)}}});"]
        if d.name in count_members:
            return [f"{x} = f.count<{t}>({'true' if d.count_is_optional else 'false'});"]
        if model.category(t) == "union":
            return [f"f.bytes(&{x}, sizeof({x}));"]
        if model.is_aggregate(t):
            if d.array:
                return [f"for (auto& e : {x}) fill(f, e);"]
            return [f"fill(f, {x});"]
        return [f"f.value({x});"]
    if m.kind == "nested":
        return [f"fill(f, {x});"]
    optional = "true" if d.pointer_is_optional else "false"
    if m.kind == "string":
        lines = [f"{x} = f.string({optional});"]
    elif m.kind == "bytes":
        lines = [f"{x} = f.bytes_array({fmt(m.count, prefix)});"]
    else:
        n = fmt(m.count, prefix) if m.kind == "array" else "1"
        et = m.elem_type
        if model.category(et) == "union":
            each = "f.bytes(&p[i], sizeof(p[i]));"
        elif model.is_aggregate(et):
            each = "fill(f, p[i]);"
        else:
            each = "f.value(p[i]);"
        if m.kind == "single":
            lines = [f"if (f.present({optional})) {{",
                     f"    auto* p = f.array<{et}>(1);", f"    {each.replace('[i]', '[0]')}", f"    {x} = p;",
                     "} else {", f"    {x} = nullptr;", "}"]
        else:
            lines = [f"{{", f"    auto* p = f.array<{et}>({n});",
                     f"    for (uint64_t i = 0; i < uint64_t({n}); ++i) {each}", f"    {x} = p;", "}"]
    if m.condition:
        # Where the rule says the pointer is not read, leave one that must never be read.
        return [f"if ({fmt(m.condition, prefix)}) {{"] + [f"    {l}" for l in lines] + \
               ["} else {", f"    {x} = f.poison<{'void' if m.kind == 'bytes' else m.elem_type or 'char'}>();", "}"]
    return lines


def equal_member_lines(model, m, prefix):
    """Lines comparing member m of `a` and `b` (both prefixed with `prefix`, e.g. "a." / "b.")."""
    d, t = m.decl, m.decl.type
    an, bn = f"a{prefix}{m.name}", f"b{prefix}{m.name}"
    path = f'at + ".{m.name}"'
    if m.kind == "pnext":
        return []
    if m.kind == "skip":
        return [f"if ({bn} != nullptr) return c.fail({path}, \"must not be copied\");"]
    if m.kind == "value":
        if model.category(t) == "union" or d.array and not model.is_aggregate(t):
            return [f"if (!same_bytes(&{an}, &{bn}, sizeof({an}))) return c.fail({path}, \"differs\");"]
        if model.is_aggregate(t):
            if d.array:
                return [f"for (size_t i = 0; i < sizeof({an}) / sizeof({an}[0]); ++i)",
                        f"    if (!equal({an}[i], {bn}[i], {path} + \"[\" + std::to_string(i) + \"]\", c)) return false;"]
            return [f"if (!equal({an}, {bn}, {path}, c)) return false;"]
        return [f"if (!same_bytes(&{an}, &{bn}, sizeof({an}))) return c.fail({path}, \"differs\");"]
    if m.kind == "nested":
        return [f"if (!equal({an}, {bn}, {path}, c)) return false;"]
    if m.kind == "string":
        lines = [f"if (!same_string({an}, {bn})) return c.fail({path}, \"differs\");"]
    elif m.kind == "bytes":
        n = fmt(m.count, "a" + prefix)
        lines = [f"if (!same_array_bytes({an}, {bn}, uint64_t({n}))) return c.fail({path}, \"differs\");"]
    else:
        et = m.elem_type
        if model.category(et) == "union" or not model.is_aggregate(et):
            elem = f"same_bytes(&{an}[i], &{bn}[i], sizeof({an}[i]))"
            cmp = f"if (!{elem}) return c.fail({path} + \"[\" + std::to_string(i) + \"]\", \"differs\");"
        else:
            cmp = f"if (!equal({an}[i], {bn}[i], {path} + \"[\" + std::to_string(i) + \"]\", c)) return false;"
        if m.kind == "single":
            lines = [f"if (({an} == nullptr) != ({bn} == nullptr)) return c.fail({path}, \"null in one only\");",
                     f"if ({an}) {{", "    const uint64_t i = 0;", f"    {cmp}", "}"]
        else:
            # A count of 0 may come with any pointer; the copy holds null then.
            n = fmt(m.count, "a" + prefix)
            lines = [f"if (uint64_t({n}) > 0) {{",
                     f"    if (!{an} || !{bn}) return c.fail({path}, \"missing\");",
                     f"    for (uint64_t i = 0; i < uint64_t({n}); ++i)",
                     f"        {cmp}", "}"]
    if m.condition:
        cond = fmt(m.condition, "a" + prefix)
        return [f"if ({cond}) {{"] + [f"    {l}" for l in lines] + [
            "} else {", f"    if ({bn} != nullptr) return c.fail({path}, \"copied although not valid\");", "}"]
    return lines


def count_members_of(members):
    """Members named in another member's count: they get small counts in the test."""
    names = {m.name for m in members if m.kind == "value"}
    used = set()
    for m in members:
        if m.count:
            used |= {w for w in re.findall(r"[A-Za-z_]\w*", m.count) if w in names}
    return used


def emit_test(model, commands, out_dir):
    structs = list(model.structs.values())
    out = [BANNER,
           "// Round-trip test helpers (tests/unit/capture_roundtrip_test.cpp includes this after\n",
           "// capture_test_support.h and capture/capture_rules.h): fill(), equal(), the recording\n",
           "// dispatch table, the cases.\n\n",
           "namespace capture_test {\n\n",
           "using namespace slipstream::capture::detail;  // the MEMBER_RULES predicates\n\n"]
    for s in structs:
        out.append(f"void fill(Filler& f, {s.name}& s);\n")
        out.append(f"bool equal(const {s.name}& a, const {s.name}& b, const std::string& at, Compare& c);\n")
        if s.stype:
            out.append(f"void fill_members(Filler& f, {s.name}& s);\n")
            out.append(f"bool equal_members(const {s.name}& a, const {s.name}& b, const std::string& at, Compare& c);\n")
    out.append("\n")
    for s in structs:
        counts = count_members_of(s.members)
        lines = []
        for m in s.members:
            lines += fill_member_lines(model, s.name, m, "s.", "s.", counts)
        if s.stype:
            out += [f"void fill_members(Filler& {'f' if lines else '/*f*/'}, {s.name}& {'s' if lines else '/*s*/'}) {{\n"]
            out += [f"    {l}\n" for l in lines]
            out += ["}\n",
                    f"void fill(Filler& f, {s.name}& s) {{\n",
                    f"    s.sType = {s.stype};\n"]
            if s.has_pnext:
                out.append("    ChainFiller chain(f);\n")
                for e in s.extenders:
                    out.append(f"    if (f.full()) {{ auto* e = f.array<{e.name}>(1); e->sType = {e.stype}; "
                               f"fill_members(f, *e); chain.append(e); }}\n")
                out.append("    s.pNext = chain.head;\n")
            out += ["    fill_members(f, s);\n", "}\n"]
        else:
            if s.has_pnext:
                raise AssertionError(f"{s.name} has pNext but no sType")
            out += [f"void fill(Filler& {'f' if lines else '/*f*/'}, {s.name}& {'s' if lines else '/*s*/'}) {{\n"]
            out += [f"    {l}\n" for l in lines]
            out.append("}\n")
        eq = []
        for m in s.members:
            eq += equal_member_lines(model, m, ".")
        if s.stype:
            out += [f"bool equal_members(const {s.name}& a, const {s.name}& b, const std::string& at, Compare& c) {{\n"]
            out += [f"    {l}\n" for l in eq]
            out += ["    (void)at; (void)c;\n", "    return true;\n}\n",
                    f"bool equal(const {s.name}& a, const {s.name}& b, const std::string& at, Compare& c) {{\n",
                    '    if (a.sType != b.sType) return c.fail(at + ".sType", "differs");\n']
            if s.has_pnext:
                out += ["    {\n",
                        "        auto* x = static_cast<const VkBaseInStructure*>(a.pNext);\n",
                        "        auto* y = static_cast<const VkBaseInStructure*>(b.pNext);\n",
                        "        for (int i = 0; x || y; ++i, x = x->pNext, y = y->pNext) {\n",
                        '            const std::string here = at + ".pNext[" + std::to_string(i) + "]";\n',
                        '            if (!x || !y) return c.fail(here, "chains differ in length");\n',
                        '            if (x->sType != y->sType) return c.fail(here, "sTypes differ");\n',
                        "            switch (x->sType) {\n"]
                for e in s.extenders:
                    out.append(f"            case {e.stype}: if (!equal_members(*reinterpret_cast<const {e.name}*>(x), "
                               f"*reinterpret_cast<const {e.name}*>(y), here, c)) return false; break;\n")
                out += ['            default: return c.fail(here, "an sType the chain does not allow");\n',
                        "            }\n", "        }\n", "    }\n"]
            out += ["    return equal_members(a, b, at, c);\n", "}\n"]
        else:
            out += [f"bool equal(const {s.name}& a, const {s.name}& b, const std::string& at, Compare& c) {{\n"]
            out += [f"    {l}\n" for l in eq]
            out += ["    (void)a; (void)b; (void)at; (void)c;\n", "    return true;\n}\n"]
    out.append("\n// --- per command: fill the arguments, capture them, compare them ---\n")
    by_record = {}
    for c in commands:
        by_record.setdefault(c.record, []).append(c)
    for record, group in by_record.items():
        c = group[0]
        counts = count_members_of(c.members)
        lines = []
        for m in c.members:
            lines += fill_member_lines(model, c.base, m, "r.", "r.", counts)
        out += [f"void fill_args_{c.capture_fn}(Filler& {'f' if lines else '/*f*/'}, slipstream::capture::CaptureRecord& record) {{\n",
                f"    auto& r = static_cast<slipstream::capture::{record}&>(record);\n"]
        out += [f"    {l}\n" for l in lines]
        out += ["    (void)r;\n", "}\n"]
        eq = []
        for m in c.members:
            eq += equal_member_lines(model, m, ".")
        out += [f"bool equal_args_{c.capture_fn}(const slipstream::capture::CaptureRecord& ra, "
                f"const slipstream::capture::CaptureRecord& rb, Compare& c) {{\n",
                f"    const auto& a = static_cast<const slipstream::capture::{record}&>(ra);\n",
                f"    const auto& b = static_cast<const slipstream::capture::{record}&>(rb);\n",
                f'    const std::string at = "{c.base}";\n']
        out += [f"    {l}\n" for l in eq]
        out += ["    (void)a; (void)b; (void)c;\n", "    return true;\n}\n"]
        args = "".join(f", r.{p.name}" for p in c.params)
        out += [f"void capture_args_{c.capture_fn}(slipstream::capture::CommandCapture& c, slipstream::CommandId id, "
                f"const slipstream::capture::CaptureRecord& record) {{\n",
                f"    const auto& r = static_cast<const slipstream::capture::{record}&>(record);\n",
                "    (void)r;\n",
                f"    slipstream::capture::{c.capture_fn}(c, id{args});\n", "}\n",
                f"std::shared_ptr<slipstream::capture::CaptureRecord> make_args_{c.capture_fn}() {{\n",
                f"    return std::make_shared<slipstream::capture::{record}>();\n", "}\n"]
    out.append("\n// --- the recording dispatch table ---\n")
    for c in commands:
        params = "".join(f", {p.declare()}" for p in c.params)
        out += [f"VKAPI_ATTR void VKAPI_CALL record_{c.fn}(VkCommandBuffer commandBuffer{params}) {{\n",
                f"    auto r = std::make_shared<slipstream::capture::{c.record}>();\n",
                f"    r->id = slipstream::CommandId::{c.fn};\n"]
        out += [f"    r->{p.name} = {p.name};\n" for p in c.params]
        out += ["    recorded_calls().push_back({commandBuffer, std::move(r)});\n", "}\n"]
    out += ["\n// Points every capturable command's member of `t` at a recorder.\n",
            "void install_recorders(VkLayerDispatchTable& t) {\n"]
    out += [f"    t.{c.fn} = record_{c.fn};\n" for c in commands]
    out += ["}\n\n", "const RoundTripCase kRoundTripCases[] = {\n"]
    for c in commands:
        fn = c.capture_fn
        out.append(f'    {{"{c.name}", slipstream::CommandId::{c.fn}, make_args_{fn}, fill_args_{fn}, '
                   f"capture_args_{fn}, equal_args_{fn}}},\n")
    out += ["};\n\n"]
    out += ["}  // namespace capture_test\n"]
    vk_registry.write(out_dir, "capture_test.inl", out)


def main():
    opts = vk_registry.arguments(__doc__)
    registry = vk_registry.Registry(opts.registry)
    r = registry.khronos_model()
    present = registry.present
    model = Model(r, registry.guards("type"))
    for root in ROOT_STRUCTS:
        try:
            model.struct(root)
        except NotCopyable as e:
            vk_registry.fail("gen_capture.py", f"cannot copy {root}: {e}")
    commands = plan_commands(r, model, present)
    emit_engine(model, commands, opts.out_dir)
    emit_test(model, commands, opts.out_dir)
    rejected = sum(len(s.not_extending) for s in model.structs.values())
    print(f"gen_capture.py: {len(commands)} capturable vkCmd* commands, {len(model.structs)} structures "
          f"({sum(s.deep for s in model.structs.values())} deep-copied), {rejected} extending structures "
          "left out of pNext chains")


if __name__ == "__main__":
    main()
