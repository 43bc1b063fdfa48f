# aotc's Makefile fragment (GNU make 4.3 or later):
#
#   include $(shell aotc --make-include)
#
# A pattern rule: `libNAME.a` (and libNAME.o, .h, .c, .pc) from NAME.hlo and NAME.yaml in
# the same directory:
#
#   app: app.o libmatmul.a ; $(CC) $^ $(AOTC_LIBS) -o $@
#   app.o: libmatmul.h
#
# A function, for any paths (outputs may live in another directory than the model):
#
#   $(eval $(call aotc_library,build/libmm,models/matmul.hlo,models/matmul.yaml))
#
# makes build/libmm.a, .o, .h, .c and .pc in one run of aotc. Either way aotc writes a
# depfile (PREFIX.d) naming the model, the config and every .npz the compile read, and
# the fragment includes it, so editing any of them rebuilds.
#
# Settings (set them before or after the include; they are read when the rule runs):
#   AOTC         the aotc command (default: aotc)
#   AOTC_TARGET  aotc's --target (default: host; e.g. aarch64 for 64-bit ARM Linux)
#   AOTC_FLAGS   more `aotc compile` options, e.g. --cc "$(CC)" --weights fed
#   AOTC_LIBS    what a program linking a model needs after it: -lm -lpthread

AOTC ?= aotc
AOTC_TARGET ?= host
AOTC_FLAGS ?=
AOTC_LIBS ?= -lm -lpthread

# $(call aotc_library,PREFIX,MODEL[,CONFIG[,FLAGS]]): PREFIX.a .o .h .c .pc from MODEL
# (neither this nor the included depfiles changes which target `make` builds by default)
define aotc_library
_aotc_goal := $$(.DEFAULT_GOAL)
$(1).a $(1).o $(1).h $(1).c $(1).pc &: $(2) $(3)
	$$(AOTC) compile $(2) $(if $(3),--config $(3)) -o $(1) --emit a,d,pc --target $$(AOTC_TARGET) $$(AOTC_FLAGS) $(4)
-include $(1).d
.DEFAULT_GOAL := $$(_aotc_goal)
endef

# the pattern: the model and config beside the library (one aotc run makes every output)
lib%.a lib%.o lib%.h lib%.c lib%.pc: %.hlo %.yaml
	$(AOTC) compile $< --config $(word 2,$^) -o $(dir $@)lib$(notdir $*) --emit a,d,pc --target $(AOTC_TARGET) $(AOTC_FLAGS)

_aotc_goal := $(.DEFAULT_GOAL)
-include $(wildcard lib*.d)
.DEFAULT_GOAL := $(_aotc_goal)
