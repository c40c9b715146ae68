; Copies through phi, select, ptrtoint/inttoptr, insertvalue/extractvalue and vectors.
@x = global i32 0, align 4
@y = global i32 0, align 4
@z = global i32 0, align 4
@w = global i32 0, align 4

define ptr @choose(i1 %c, ptr %a) {
entry:
  br i1 %c, label %then, label %else

then:
  br label %join

else:
  br label %join

join:
  %p = phi ptr [ @x, %then ], [ %a, %else ]
  %q = select i1 %c, ptr %p, ptr @z
  %i = ptrtoint ptr %q to i64
  %r = inttoptr i64 %i to ptr
  %v = insertvalue { ptr, i32 } undef, ptr %r, 0
  %e = extractvalue { ptr, i32 } %v, 0
  ret ptr %e
}

define ptr @vectors(ptr %a) {
entry:
  %v0 = insertelement <2 x ptr> undef, ptr %a, i32 0
  %v1 = insertelement <2 x ptr> %v0, ptr @w, i32 1
  %s = shufflevector <2 x ptr> %v1, <2 x ptr> undef, <2 x i32> <i32 1, i32 0>
  %e = extractelement <2 x ptr> %s, i32 0
  %f = freeze ptr %e
  ret ptr %f
}

define ptr @arith(ptr %a) {
entry:
  %i = ptrtoint ptr %a to i64
  %j = add i64 %i, 8
  %k = inttoptr i64 %j to ptr
  ret ptr %k
}

define i32 @main() {
entry:
  %r = call ptr @choose(i1 true, ptr @y)
  %t = call ptr @vectors(ptr @x)
  %u = call ptr @arith(ptr @x)
  %n = icmp eq ptr %r, null
  %z = zext i1 %n to i32
  ret i32 %z
}
