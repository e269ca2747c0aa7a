/* pickle_ops.h - pickle opcode bytes (CPython Lib/pickle.py names). */
#ifndef SNAPDIFF_PICKLE_OPS_H
#define SNAPDIFF_PICKLE_OPS_H

#include <stdbool.h>
#include <stdint.h>

enum {
    SDP_OP_MARK = '(', SDP_OP_STOP = '.', SDP_OP_POP = '0', SDP_OP_POP_MARK = '1', SDP_OP_DUP = '2',
    SDP_OP_FLOAT = 'F', SDP_OP_INT = 'I', SDP_OP_BININT = 'J', SDP_OP_BININT1 = 'K', SDP_OP_LONG = 'L',
    SDP_OP_BININT2 = 'M', SDP_OP_NONE = 'N', SDP_OP_PERSID = 'P', SDP_OP_BINPERSID = 'Q', SDP_OP_REDUCE = 'R',
    SDP_OP_STRING = 'S', SDP_OP_BINSTRING = 'T', SDP_OP_SHORT_BINSTRING = 'U', SDP_OP_UNICODE = 'V',
    SDP_OP_BINUNICODE = 'X', SDP_OP_APPEND = 'a', SDP_OP_BUILD = 'b', SDP_OP_GLOBAL = 'c', SDP_OP_DICT = 'd',
    SDP_OP_EMPTY_DICT = '}', SDP_OP_APPENDS = 'e', SDP_OP_GET = 'g', SDP_OP_BINGET = 'h', SDP_OP_INST = 'i',
    SDP_OP_LONG_BINGET = 'j', SDP_OP_LIST = 'l', SDP_OP_EMPTY_LIST = ']', SDP_OP_OBJ = 'o', SDP_OP_PUT = 'p',
    SDP_OP_BINPUT = 'q', SDP_OP_LONG_BINPUT = 'r', SDP_OP_SETITEM = 's', SDP_OP_TUPLE = 't',
    SDP_OP_EMPTY_TUPLE = ')', SDP_OP_SETITEMS = 'u', SDP_OP_BINFLOAT = 'G',
    /* protocol 2 */
    SDP_OP_PROTO = 0x80, SDP_OP_NEWOBJ = 0x81, SDP_OP_EXT1 = 0x82, SDP_OP_EXT2 = 0x83, SDP_OP_EXT4 = 0x84,
    SDP_OP_TUPLE1 = 0x85, SDP_OP_TUPLE2 = 0x86, SDP_OP_TUPLE3 = 0x87, SDP_OP_NEWTRUE = 0x88,
    SDP_OP_NEWFALSE = 0x89, SDP_OP_LONG1 = 0x8a, SDP_OP_LONG4 = 0x8b,
    /* protocol 3 */
    SDP_OP_BINBYTES = 'B', SDP_OP_SHORT_BINBYTES = 'C',
    /* protocol 4 */
    SDP_OP_SHORT_BINUNICODE = 0x8c, SDP_OP_BINUNICODE8 = 0x8d, SDP_OP_BINBYTES8 = 0x8e,
    SDP_OP_EMPTY_SET = 0x8f, SDP_OP_ADDITEMS = 0x90, SDP_OP_FROZENSET = 0x91, SDP_OP_NEWOBJ_EX = 0x92,
    SDP_OP_STACK_GLOBAL = 0x93, SDP_OP_MEMOIZE = 0x94, SDP_OP_FRAME = 0x95,
    /* protocol 5 */
    SDP_OP_BYTEARRAY8 = 0x96, SDP_OP_NEXT_BUFFER = 0x97, SDP_OP_READONLY_BUFFER = 0x98,
};

/* "BINUNICODE", or "0x.." style "unknown" for bytes that are not opcodes. */
const char *sdp_opcode_name(uint8_t op);
/* True for the opcodes that build objects, call code or need out-of-band data. */
bool sdp_opcode_refused(uint8_t op);

#endif
