#!/usr/bin/env python3
"""Generates Slipstream's per-command tables and vkCmd* interception from vk.xml.

Outputs (into --out-dir):
  command_table.h     CommandId enum and, for every vkCmd* command of the registry, what kind
                      of work it is, which pipeline stages it executes in and whether
                      Slipstream can capture it (vk_registry.CAPTURABLE, which gen_capture.py
                      checks; src/ uses it).
  cmd_intercepts.inl  one pass-through wrapper per vkCmd* command that records the command's
                      kind in its command buffer's state and, while the command buffer has a
                      capture, captures the command (or marks the buffer non-capturable),
                      plus a name -> function table (layer/ includes it). Commands hooked by
                      hand (--hooks, layer/hooks.txt) are left out of the wrappers.

The classification of commands into kinds and stages is the table RULES below; vk.xml's
`tasks` attribute says whether a command is an action, state, synchronization or
indirection command. An action command that no rule matches is classified Other with
ALL_COMMANDS stages, the conservative answer.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vk_registry  # noqa: E402

# (name regex, kind, stage flag names without the VK_PIPELINE_STAGE_2_ prefix; checked
# against vk.xml's VkPipelineStageFlagBits2).
# First match wins, so specific rules come before general ones.
RULES = [
    (r"^vkCmdDispatchIndirect", "Compute", ["COMPUTE_SHADER_BIT", "DRAW_INDIRECT_BIT"]),
    (r"^vkCmdDispatch|^vkCmdCuLaunchKernel", "Compute", ["COMPUTE_SHADER_BIT"]),
    (r"^vkCmdTraceRays(Indirect)", "RayTracing", ["RAY_TRACING_SHADER_BIT_KHR", "DRAW_INDIRECT_BIT"]),
    (r"^vkCmdTraceRays", "RayTracing", ["RAY_TRACING_SHADER_BIT_KHR"]),
    (r"AccelerationStructure", "AccelerationStructure",
     ["ACCELERATION_STRUCTURE_BUILD_BIT_KHR", "ACCELERATION_STRUCTURE_COPY_BIT_KHR"]),
    (r"Micromap", "AccelerationStructure", ["MICROMAP_BUILD_BIT_EXT"]),
    (r"^vkCmdCopyQueryPoolResults", "Transfer", ["COPY_BIT"]),
    (r"Query|Timestamp", "Query", ["ALL_COMMANDS_BIT"]),
    (r"ConditionalRendering", "Graphics", ["CONDITIONAL_RENDERING_BIT_EXT"]),
    (r"^vkCmdDraw.*(Indirect|Count)", "Graphics", ["ALL_GRAPHICS_BIT", "DRAW_INDIRECT_BIT"]),
    (r"^vkCmdDraw|SubpassShading|ClearAttachments|RenderPass|Rendering|Subpass", "Graphics",
     ["ALL_GRAPHICS_BIT"]),
    (r"^vkCmdClear(Color|DepthStencil)Image", "Transfer", ["CLEAR_BIT"]),
    (r"^vkCmdBlitImage", "Transfer", ["BLIT_BIT"]),
    (r"^vkCmdResolveImage", "Transfer", ["RESOLVE_BIT"]),
    (r"^vkCmdCopyMemory.*Indirect", "Transfer", ["COPY_BIT", "DRAW_INDIRECT_BIT"]),
    (r"^vkCmd(Copy|Fill|Update)", "Transfer", ["ALL_TRANSFER_BIT"]),
    (r"WriteBufferMarker", "Transfer", ["ALL_TRANSFER_BIT"]),
    (r"DebugMarker|DebugUtilsLabel|PerformanceMarker|PerformanceStreamMarker|Checkpoint",
     "Debug", []),
    (r"DecodeVideo", "Video", ["VIDEO_DECODE_BIT_KHR"]),
    # Encode stages are provisional (beta) in the headers we build against: stay conservative.
    (r"Video", "Video", ["ALL_COMMANDS_BIT"]),
]
KINDS = ["State", "Sync", "Debug", "Compute", "Transfer", "Graphics", "Query",
         "AccelerationStructure", "RayTracing", "Video", "Indirection", "Other"]


def classify(name, tasks):
    if "indirection" in tasks:
        return "Indirection", ["ALL_COMMANDS_BIT"]
    if "action" in tasks:
        for pattern, kind, stages in RULES:
            if re.search(pattern, name):
                return kind, stages
        return "Other", ["ALL_COMMANDS_BIT"]
    if "synchronization" in tasks:
        return "Sync", []
    return "State", []


def stage_expr(stages, known):
    if not stages:
        return "VK_PIPELINE_STAGE_2_NONE"
    names = [f"VK_PIPELINE_STAGE_2_{s}" for s in stages]
    bad = [n for n in names if n not in known]
    if bad:
        vk_registry.fail("gen_commands.py", f"RULES name stages that vk.xml does not define: {bad}")
    return " | ".join(names)


def main():
    opts = vk_registry.arguments(__doc__, hooks=True)
    registry = vk_registry.Registry(opts.registry)
    capture_fns = registry.capturable()
    buffer_cmds = registry.buffer_uses()
    manual = {n for n in vk_registry.hooks_of(vk_registry.read_hooks(opts.hooks, registry, "gen_commands.py"))
              if n.startswith("vkCmd")}
    entries = [e for e in registry.declared() if e[0].startswith("vkCmd")]  # (name, definition, protect)

    banner = vk_registry.banner("gen_commands.py")
    table = [banner, "#pragma once\n", "#include <vulkan/vulkan.h>\n", "#include <cstdint>\n\n",
             "namespace slipstream {\n\n",
             "// What kind of work a command is. The order is part of the statistics' JSON.\n",
             "enum class CommandKind : uint8_t {\n"]
    table += [f"    {k},\n" for k in KINDS]
    table += ["};\n", f"inline constexpr int kCommandKindCount = {len(KINDS)};\n",
              "inline constexpr const char* kCommandKindNames[] = {",
              ", ".join(f'"{k}"' for k in KINDS), "};\n\n",
              "enum class CommandId : uint16_t {\n"]
    table += [f"    {n[2:]},\n" for n, _, _ in entries]
    table += ["};\n", f"inline constexpr int kCommandCount = {len(entries)};\n\n",
              "struct CommandInfo {\n    const char* name;\n    CommandKind kind;\n",
              "    VkPipelineStageFlags2 stages;  // stages the command executes in\n",
              "    bool capturable;               // capture/ can deep-copy and replay it\n};\n\n",
              "inline constexpr CommandInfo kCommandInfo[] = {\n"]
    counts = {}
    for name, cmd, _ in entries:
        kind, stages = classify(name, cmd["tasks"])
        counts[kind] = counts.get(kind, 0) + 1
        capturable = "true" if name in capture_fns else "false"
        table.append(f'    {{"{name}", CommandKind::{kind}, {stage_expr(stages, registry.stages)}, {capturable}}},\n')
    table += ["};\n\n", "}  // namespace slipstream\n"]

    inl = [banner,
           "// Included by layer/command_intercepts.cpp, which defines SLIPSTREAM_RECORD(cb, id):\n",
           "// it records command `id` in the state of command buffer `cb` and yields that state\n",
           "// (a slipstream::CommandBufferState&). Its `capture` is null unless fusion is on, so\n",
           "// that while it is off capture costs one branch per command; a command buffer recorded\n",
           "// lazily (`lazy`) is only captured, and the driver sees it when fusion replays it.\n",
           "// Commands that can name a\n",
           "// buffer first let cached readback resolve deferred binds (buffer_uses.h).\n\n"]
    names = []
    for name, cmd, protect in entries:
        if name in manual:
            continue
        fn = name[2:]
        params = cmd["param_list"]
        args = cmd["arg_list"]
        ret = cmd["ret"]
        cid = f"slipstream::CommandId::{fn}"
        if name in capture_fns:
            # A lazily recorded command buffer stops here: the driver sees it at replay.
            capture = (f"{{ slipstream::capture::{capture_fns[name]}(*s.capture, {cid}"
                       f"{''.join(', ' + a for a in cmd['args'][1:])}); if (s.lazy) return; }}")
        else:
            # Stopping the capture of a lazily recorded command buffer records it natively;
            # one that stays lazy then is one whose native begin failed (capture_control.h):
            # the driver, which never began it, gets nothing more.
            dropped = "return;" if ret == "void" else "return s.native_error;"
            capture = f"{{ s.capture->stop({cid}); if (s.lazy) {dropped} }}"
        # Cached readback's deferred binds (gen_buffer_uses.py): a command that can name a
        # buffer resolves first, one branch while nothing is deferred or moved.
        watch = (f"    if (s.device->buffer_watch.load(std::memory_order_relaxed)) "
                 f"slipstream::buffer_use::{fn}(*s.device, {args});\n") if name in buffer_cmds else ""
        body = (f"    slipstream::CommandBufferState& s = SLIPSTREAM_RECORD({cmd['args'][0]}, {cid});\n"
                f"{watch}"
                f"    if (s.capture) {capture}\n"
                f"    {'return ' if ret != 'void' else ''}s.device->dispatch.{fn}({args});\n")
        inl.append(vk_registry.guard(f"static VKAPI_ATTR {ret} VKAPI_CALL {fn}({params}) {{\n{body}}}\n", protect))
        names.append((name, fn, protect))
    inl.append("\n// Every generated wrapper, by name, for vkGetDeviceProcAddr.\n")
    inl.append("static const struct { const char* name; PFN_vkVoidFunction fn; } "
               "kGeneratedCommandIntercepts[] = {\n")
    inl += vk_registry.proc_table(names)
    inl.append("};\n")
    vk_registry.write(opts.out_dir, "command_table.h", table)
    vk_registry.write(opts.out_dir, "cmd_intercepts.inl", inl)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"gen_commands.py: {len(entries)} vkCmd* commands ({summary}); "
          f"{len(manual)} hand-written; {len(capture_fns)} capturable")


if __name__ == "__main__":
    main()
