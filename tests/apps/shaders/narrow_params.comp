#version 450
// narrow_barriers, indirect scenario: one invocation writes the VkDispatchIndirectCommand
// {groups, 1, 1} at word 4 * slot of `params`, for a vkCmdDispatchIndirect to read.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Params { uint params[]; };
layout(push_constant) uniform Push {
    uint groups;
    uint slot;
} pc;

void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    params[4u * pc.slot + 0u] = pc.groups;
    params[4u * pc.slot + 1u] = 1u;
    params[4u * pc.slot + 2u] = 1u;
}
