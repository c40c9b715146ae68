; What the model leaves out, each reported.
@cmp_calls = global i32 0

define i32 @cmp(ptr %a, ptr %b) {
entry:
  ret i32 0
}

define i32 @sum(i32 %n, ...) {
entry:
  %ap = alloca [1 x { i32, i32, ptr, ptr }], align 16
  call void @llvm.va_start(ptr %ap)
  %p = va_arg ptr %ap, ptr
  call void @llvm.va_end(ptr %ap)
  ret i32 0
}

define ptr @main(ptr %base) {
entry:
  %e = call ptr @getenv(ptr null)
  %e2 = call ptr @getenv(ptr null)
  call void @qsort(ptr %base, i64 4, i64 8, ptr @cmp)
  %asm = call ptr asm sideeffect "mov $1, $0", "=r,r"(ptr %base)
  %i = inttoptr i64 4096 to ptr
  %fp = bitcast ptr %base to ptr
  %r = call ptr %fp(ptr %base, ptr %base, ptr %base)
  %pair = cmpxchg ptr %base, ptr %e, ptr %i seq_cst seq_cst, align 8
  ret ptr %r
}

declare ptr @getenv(ptr)
declare void @qsort(ptr, i64, i64, ptr)
declare void @llvm.va_start(ptr)
declare void @llvm.va_end(ptr)
