/* dtype.h — element types of tec tensors and expressions.
 *
 * A dtype is (code, bits, lanes), the same triple DLPack uses, so a tec dtype maps onto a
 * DLTensor's dtype field without translation. lanes > 1 is a vector of that many elements
 * (produced by the vectorizer, or written by a user). Booleans are code TEC_BOOL, 1 bit in
 * registers and one byte (u8) in memory.
 */
#ifndef TEC_DTYPE_H
#define TEC_DTYPE_H

#include <stdint.h>
#include <stdbool.h>

typedef enum tec_type_code {
  TEC_INT = 0,    /* signed two's complement integer (DLPack kDLInt) */
  TEC_UINT = 1,   /* unsigned integer (kDLUInt) */
  TEC_FLOAT = 2,  /* IEEE float: 16 (storage only), 32 or 64 bits (kDLFloat) */
  TEC_HANDLE = 3, /* an opaque pointer: buffer variables after storage flattening */
  TEC_BOOL = 6    /* truth value: i1 in registers, u8 in memory */
} tec_type_code;

typedef struct tec_dtype {
  uint8_t code;   /* a tec_type_code */
  uint8_t bits;   /* bits of one lane */
  uint16_t lanes; /* 1 for scalars */
} tec_dtype;

#define TEC_DTYPE(c, b, l) ((tec_dtype){(uint8_t)(c), (uint8_t)(b), (uint16_t)(l)})
#define TEC_F16 TEC_DTYPE(TEC_FLOAT, 16, 1)
#define TEC_F32 TEC_DTYPE(TEC_FLOAT, 32, 1)
#define TEC_F64 TEC_DTYPE(TEC_FLOAT, 64, 1)
#define TEC_I8 TEC_DTYPE(TEC_INT, 8, 1)
#define TEC_U8 TEC_DTYPE(TEC_UINT, 8, 1)
#define TEC_I16 TEC_DTYPE(TEC_INT, 16, 1)
#define TEC_I32 TEC_DTYPE(TEC_INT, 32, 1)
#define TEC_I64 TEC_DTYPE(TEC_INT, 64, 1)
#define TEC_BOOLT TEC_DTYPE(TEC_BOOL, 1, 1)
#define TEC_HANDLET TEC_DTYPE(TEC_HANDLE, 64, 1)

/* The type of loop variables, size variables and every index expression. */
#define TEC_INDEX TEC_I64

static inline bool tec_dtype_eq(tec_dtype a, tec_dtype b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline tec_dtype tec_dtype_with_lanes(tec_dtype t, int lanes) {
  t.lanes = (uint16_t)lanes;
  return t;
}
static inline tec_dtype tec_dtype_scalar(tec_dtype t) { return tec_dtype_with_lanes(t, 1); }
static inline bool tec_dtype_is_float(tec_dtype t) { return t.code == TEC_FLOAT; }
static inline bool tec_dtype_is_int(tec_dtype t) { return t.code == TEC_INT || t.code == TEC_UINT; }
static inline bool tec_dtype_is_bool(tec_dtype t) { return t.code == TEC_BOOL; }
/* Bytes one lane occupies in memory (bool: 1). */
static inline int tec_dtype_bytes(tec_dtype t) { return t.code == TEC_BOOL ? 1 : (t.bits + 7) / 8; }

/* Writes "float32", "int64x8", "bool" ... into buf (size >= 32); returns buf. */
char *tec_dtype_str(tec_dtype t, char *buf, int size);

#endif
