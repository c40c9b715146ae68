; Calls in less common shapes: a struct returned by value from a variadic function, called
; directly and through a pointer with its function type spelled out, and inline assembly.
%struct.T = type { ptr }

@g = global i32 0, align 4

define %struct.T @mk(ptr %p, ...) {
entry:
  %r = insertvalue %struct.T undef, ptr %p, 0
  ret %struct.T %r
}

define void @user() {
entry:
  %fp = alloca ptr, align 8
  store ptr @mk, ptr %fp, align 8
  %f = load ptr, ptr %fp, align 8
  %t = call %struct.T (ptr, ...) %f(ptr @g, i32 1, i32 2)
  %p = extractvalue %struct.T %t, 0
  %d = call %struct.T (ptr, ...) @mk(ptr null)
  call void asm sideeffect "", ""()
  ret void
}
