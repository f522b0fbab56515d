/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * Test package gotforms: makes gcc -O2 emit the less common GOT access forms
 * (x86_64: cmpq/pushq/movq-to-xmm/movhps with S@GOTPCREL; aarch64: the same
 * through :got:), so their rewriting is executed, not just assembled.
 */
#ifndef GFSTATE_H_
#define GFSTATE_H_

#include <stdint.h>

extern int   gf_a;
extern int   gf_b;
extern void  *gf_pair[2];
extern long  gf_flags[2];
extern long  gf_sum;
extern void  *gf_g;
extern void  *gf_h;

/* 8 arguments: the last two go on the stack */
void gf_many(long a, long b, long c, long d, long e, long f, void *g, void *h);

#endif
