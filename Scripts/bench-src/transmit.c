/* Baseline for Scripts/bench transmit: a plain SCardTransmit loop in C, the same APDU the
 * Swift side sends. Prints "median_us mean_us" over N timed exchanges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <winscard.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s READER N\n", argv[0]); return 64; }
    int n = atoi(argv[2]);
    SCARDCONTEXT ctx;
    SCARDHANDLE card;
    DWORD proto;
    LONG rv = SCardEstablishContext(SCARD_SCOPE_SYSTEM, NULL, NULL, &ctx);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "establish: %s\n", pcsc_stringify_error(rv)); return 69; }
    rv = SCardConnect(ctx, argv[1], SCARD_SHARE_SHARED, SCARD_PROTOCOL_ANY, &card, &proto);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "connect: %s\n", pcsc_stringify_error(rv)); return 69; }
    const SCARD_IO_REQUEST *pci = proto == SCARD_PROTOCOL_T1 ? SCARD_PCI_T1 : SCARD_PCI_T0;
    unsigned char select[] = {0x00, 0xA4, 0x04, 0x00, 0x06, 0xF0, 0x61, 0x70, 0x64, 0x75, 0x01, 0x00};
    unsigned char echo[] = {0x00, 0xEE, 0x00, 0x00, 0x02, 0xCA, 0xFE};
    unsigned char rx[MAX_BUFFER_SIZE_EXTENDED];
    DWORD rxlen = sizeof rx;
    rv = SCardTransmit(card, pci, select, sizeof select, NULL, rx, &rxlen);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "select: %s\n", pcsc_stringify_error(rv)); return 74; }
    double *t = malloc(sizeof(double) * n);
    double total = 0;
    for (int i = 0; i < n; i++) {
        rxlen = sizeof rx;
        double start = now_us();
        rv = SCardTransmit(card, pci, echo, sizeof echo, NULL, rx, &rxlen);
        t[i] = now_us() - start;
        total += t[i];
        if (rv != SCARD_S_SUCCESS || rxlen != 4) { fprintf(stderr, "transmit failed at %d\n", i); return 74; }
    }
    qsort(t, n, sizeof(double), cmp);
    printf("%.2f %.2f\n", t[n / 2], total / n);
    SCardDisconnect(card, SCARD_LEAVE_CARD);
    SCardReleaseContext(ctx);
    return 0;
}
