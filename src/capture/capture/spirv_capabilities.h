// What a SPIR-V module's capabilities say about the memory its shaders can reach. A module
// that declares PhysicalStorageBufferAddresses (buffer device addresses) or Addresses can
// dereference any address it is given: no descriptor bounds what it touches.
#pragma once

#include <cstddef>
#include <cstdint>

namespace slipstream::capture {

// True when the module may reach memory through addresses (or cannot be read: a malformed or
// byte-swapped module counts as reaching anything). `size` in bytes, as in
// VkShaderModuleCreateInfo::codeSize.
bool spirv_reaches_any_memory(const uint32_t* code, size_t size);

}  // namespace slipstream::capture
