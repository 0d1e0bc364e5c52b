/* bcryptprimitives.dll for Wine 8 (Debian 12's), which has none: Rust's standard library on
 * Windows asks it for random bytes (ProcessPrng, Windows 10's), so a Rust program does not even
 * start under that Wine. This one exports ProcessPrng and takes the bytes from RtlGenRandom
 * (advapi32's SystemFunction036), which Wine 8 has. Built with mingw-w64 and put in the Wine
 * prefix's system32 by .ci/wine-check.sh; never shipped. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG n = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        size -= n;
    }
    return TRUE;
}
