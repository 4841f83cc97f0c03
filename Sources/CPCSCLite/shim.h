#ifndef SWIFT_APDU_CPCSCLITE_SHIM_H
#define SWIFT_APDU_CPCSCLITE_SHIM_H

// pkg-config libpcsclite puts /usr/include/PCSC on the include path.
#include <winscard.h>
#include <reader.h>

// Swift cannot import macros that take the address of a global or cast; these
// accessors give it what it needs.

static inline const SCARD_IO_REQUEST *cpcsc_pci_t0(void) { return SCARD_PCI_T0; }
static inline const SCARD_IO_REQUEST *cpcsc_pci_t1(void) { return SCARD_PCI_T1; }
static inline const SCARD_IO_REQUEST *cpcsc_pci_raw(void) { return SCARD_PCI_RAW; }

static inline DWORD cpcsc_infinite(void) { return INFINITE; }
static inline DWORD cpcsc_autoallocate(void) { return SCARD_AUTOALLOCATE; }
static inline DWORD cpcsc_max_buffer_size_extended(void) { return MAX_BUFFER_SIZE_EXTENDED; }
static inline DWORD cpcsc_max_buffer_size(void) { return MAX_BUFFER_SIZE; }
static inline DWORD cpcsc_max_readername(void) { return MAX_READERNAME; }

#endif
