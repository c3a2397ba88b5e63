/** The VGPU reshape fixture (scripts/setup-vgpu-fixture.mjs, fixtures/reshape/vgpu.yaml): its uuids. */
export const CN = '0d0d0d0d-0000-4000-8000-000000000001'
export const PGPU0 = '0d0d0d0d-0000-4000-8000-0000000000a0'
export const PGPU1 = '0d0d0d0d-0000-4000-8000-0000000000a1'
export const VM_A = 'a0a0a0a0-0000-4000-8000-00000000000a'
export const VM_B = 'b0b0b0b0-0000-4000-8000-00000000000b'
