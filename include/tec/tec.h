/* tec.h — the umbrella header: tensor expressions, schedules, lowering, codegen, runtime,
 * operator templates. The differential schedule tester is not part of it: include
 * "tec/difftest.h" for dt_run and dt_instance. */
#ifndef TEC_TEC_H
#define TEC_TEC_H

#include "tec/dtype.h"
#include "tec/ir.h"
#include "tec/te.h"
#include "tec/schedule.h"
#include "tec/lower.h"
#include "tec/target.h"
#include "tec/build.h"
#include "tec/runtime.h"
#include "tec/topi.h"

#endif
