// Makes Swift's `Synchronization.Mutex` visible to ThreadSanitizer on Linux (loaded with LD_PRELOAD
// by Scripts/sanitizers.sh; never part of the product).
//
// `Mutex` takes and releases an uncontended lock with atomic instructions inlined into our code,
// which TSan sees. A contended lock goes to `_MutexHandle._lockSlow` in libswiftSynchronization.so:
// it spins on an uninstrumented compare-and-swap, then waits in a priority-inheritance futex, where
// the kernel hands the lock over. TSan sees neither, so it reports every contended access to a
// Mutex's state as a race. These wrappers tell TSan what happened: an acquire on the lock word after
// a slow lock or a successful slow try-lock, a release on it before a slow unlock.
//
// The slow paths are Swift methods of `_MutexHandle`; `self` (the lock word's address) arrives in
// the Swift context register, which clang's swiftcall convention exposes as `swift_context`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Weak: LD_PRELOAD also reaches processes without TSan (swift test's driver, mosquitto), where
// these are absent and the wrappers only pass calls through.
void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

// The original slow path, or an abort naming it if this toolchain's Synchronization has none.
static void *original(const char *symbol) {
    void *function = dlsym(RTLD_NEXT, symbol);
    if (!function) {
        fprintf(stderr, "mutex-tsan-shim: %s not found; the shim does not fit this toolchain\n", symbol);
        abort();
    }
    return function;
}

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFTCALL void (*LockSlow)(uint32_t owner, SWIFT_SELF void *handle);
typedef SWIFTCALL bool (*TryLockSlow)(SWIFT_SELF void *handle);
typedef SWIFTCALL void (*UnlockSlow)(SWIFT_SELF void *handle);

SWIFTCALL void lockSlow(uint32_t owner, SWIFT_SELF void *handle) __asm__(LOCK_SLOW);
SWIFTCALL bool tryLockSlow(SWIFT_SELF void *handle) __asm__(TRY_LOCK_SLOW);
SWIFTCALL void unlockSlow(SWIFT_SELF void *handle) __asm__(UNLOCK_SLOW);

SWIFTCALL void lockSlow(uint32_t owner, SWIFT_SELF void *handle) {
    static LockSlow slowPath;
    if (!slowPath) slowPath = (LockSlow)original(LOCK_SLOW);
    slowPath(owner, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCALL bool tryLockSlow(SWIFT_SELF void *handle) {
    static TryLockSlow slowPath;
    if (!slowPath) slowPath = (TryLockSlow)original(TRY_LOCK_SLOW);
    bool locked = slowPath(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}

SWIFTCALL void unlockSlow(SWIFT_SELF void *handle) {
    static UnlockSlow slowPath;
    if (!slowPath) slowPath = (UnlockSlow)original(UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    slowPath(handle);
}
