; Typed pointers, as clang 14 writes IR by default.
%struct.pair = type { i32*, %struct.pair* }

@g = global i32 0, align 4
@gp = global i32* @g, align 8
@elem = global i32* getelementptr inbounds ([3 x i32], [3 x i32]* @arr, i32 0, i32 1), align 8
@arr = global [3 x i32] zeroinitializer, align 4
@fp = global i32* (i32*)* @id, align 8

define i32* @id(i32* %p) {
entry:
  ret i32* %p
}

define void @use() {
entry:
  %s = alloca %struct.pair, align 8
  %first = getelementptr inbounds %struct.pair, %struct.pair* %s, i32 0, i32 0
  %0 = load i32*, i32** @gp, align 8
  store i32* %0, i32** %first, align 8
  %1 = bitcast %struct.pair* %s to i8*
  %2 = call i8* @malloc(i64 16)
  %3 = bitcast i8* %2 to %struct.pair*
  %next = getelementptr inbounds %struct.pair, %struct.pair* %s, i32 0, i32 1
  store %struct.pair* %3, %struct.pair** %next, align 8
  %f = load i32* (i32*)*, i32* (i32*)** @fp, align 8
  %r = call i32* %f(i32* %0)
  %e = load i32*, i32** @elem, align 8
  call void bitcast (void (i32*)* @h to void (i32**)*)(i32** %first)
  ret void
}

define void @h(i32* %q) {
entry:
  ret void
}

declare i8* @malloc(i64)
