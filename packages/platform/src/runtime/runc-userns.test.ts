import { slotNamespace, USERNS_FIRST_HOST_ID, USERNS_SIZE, USERNS_SLOTS } from "./runc-userns.js";

test("every slot's range lies in 0x70000000..0x7FFDFFFF, aligned, and apart from every other", () => {
  expect(USERNS_SLOTS).toBe(4094);
  const first = slotNamespace(0);
  const last = slotNamespace(USERNS_SLOTS - 1);
  expect(first).toEqual({ hostId: 0x7000_0000, size: USERNS_SIZE });
  expect(last.hostId + last.size - 1).toBe(0x7ffd_ffff);
  // below 2^31 (ps and others print ids past it as negative) and above nspawn's ranges
  expect(last.hostId + last.size).toBeLessThanOrEqual(2 ** 31);
  expect(USERNS_FIRST_HOST_ID).toBeGreaterThan(0x6fff_ffff);
  expect(slotNamespace(1).hostId - first.hostId).toBe(USERNS_SIZE);
  expect(USERNS_FIRST_HOST_ID % USERNS_SIZE).toBe(0);
});
