//! Writes the rewritten class: the original pool plus appended constants, every untouched member
//! and attribute copied byte for byte, each wrapped native replaced by its wrapper, and the renamed
//! natives (and injected helpers) appended after the original methods.

use crate::annotations::{self, CALLER_SENSITIVE, INTRINSIC_CANDIDATE};
use crate::constpool::PoolBuilder;
use crate::descriptor::{self, MethodShape};
use crate::parse::{ClassLayout, MethodSpan};
use crate::policy::{reason, Decision, NativeFacts};
use crate::reader::{PutBe, Result};
use crate::scan::ACC_NATIVE;
use crate::wrap::{self, CommonRefs};
use crate::{mutf8, NativeMethodRef, Outcome, RewriteConfig, RewriteError, SkippedNative};

const ACC_PRIVATE: u16 = 0x0002;
const ACC_PROTECTED: u16 = 0x0004;
const ACC_STATIC: u16 = 0x0008;
const ACC_VOLATILE: u16 = 0x0040;
const ACC_SYNTHETIC: u16 = 0x1000;

const INT_VOID: &[u8] = b"(I)V";

/// A native that will be wrapped.
struct Planned {
    method: usize,
    reference: NativeMethodRef,
    shape: MethodShape,
    strip_intrinsic: bool,
}

fn declares_method(layout: &ClassLayout<'_>, name: &[u8], descriptor: &[u8]) -> bool {
    layout.methods.iter().any(|m| {
        layout.utf8(m.name_index).ok() == Some(name)
            && layout.utf8(m.descriptor_index).ok() == Some(descriptor)
    })
}

fn concat(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(a.len() + b.len());
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    v
}

/// Annotation facts of a native method; errors on a native that has a `Code` attribute.
fn native_facts(
    layout: &ClassLayout<'_>,
    method: &MethodSpan,
    jna_direct_mapping: bool,
) -> Result<NativeFacts> {
    let mut facts = NativeFacts {
        access_flags: method.access,
        jna_direct_mapping,
        ..NativeFacts::default()
    };
    for attr in &method.attributes {
        let name = layout.utf8(attr.name_index)?;
        if name == b"Code" {
            return Err(RewriteError::Malformed(
                "native method with a Code attribute".into(),
            ));
        }
        if annotations::is_annotations_attribute(layout, attr) {
            for a in annotations::list(layout, attr)? {
                facts.intrinsic_candidate |= INTRINSIC_CANDIDATE.contains(&a.type_name);
                facts.caller_sensitive |= CALLER_SENSITIVE.contains(&a.type_name);
            }
        }
    }
    Ok(facts)
}

/// Names the rewriter emits must be legal JVM names (JVMS 4.2.2), or the VM rejects the class.
fn check_config(config: &RewriteConfig) -> Result<()> {
    let unqualified = |what: &str, name: &str| {
        if name.is_empty() || name.contains(['.', ';', '[', '/', '<', '>']) {
            Err(RewriteError::InvalidConfig(format!(
                "{what} {name:?} is not a legal method or field name"
            )))
        } else {
            Ok(())
        }
    };
    let helper = &config.helper;
    unqualified("prefix", &config.prefix)?;
    unqualified("helper begin", &helper.begin)?;
    unqualified("helper end", &helper.end)?;
    unqualified("gate field", &helper.gate_field)?;
    let owner = &helper.owner;
    if owner.is_empty() || owner.contains(['.', ';', '[']) || owner.split('/').any(str::is_empty) {
        return Err(RewriteError::InvalidConfig(format!(
            "helper owner {owner:?} is not an internal class name such as java/lang/Object"
        )));
    }
    Ok(())
}

pub(crate) fn rewrite_class(
    bytes: &[u8],
    config: &RewriteConfig,
    assign_id: &mut dyn FnMut(&NativeMethodRef) -> i32,
) -> Result<Outcome> {
    let layout = ClassLayout::parse(bytes)?;
    let class_raw = layout.class_name(layout.this_class)?;
    let class_name = mutf8::decode(class_raw);
    let helper = &config.helper;
    let prefix = mutf8::encode(&config.prefix);
    let begin_name = mutf8::encode(&helper.begin);
    let end_name = mutf8::encode(&helper.end);
    let begin_native = concat(&begin_name, b"N");
    let end_native = concat(&end_name, b"N");
    let is_owner = class_name == helper.owner;
    let inject =
        is_owner && helper.inject_into_owner && !declares_method(&layout, &begin_name, INT_VOID);

    // Names already carrying the prefix (normally none), for collision checks.
    let prefixed_names: Vec<(&[u8], &[u8])> = layout
        .methods
        .iter()
        .filter_map(|m| {
            let name = layout.utf8(m.name_index).ok()?;
            let desc = layout.utf8(m.descriptor_index).ok()?;
            (!prefix.is_empty() && name.starts_with(&prefix)).then_some((name, desc))
        })
        .collect();

    // JNA direct mapping: Native.register(...) called from the class itself (usually its static
    // initializer) reflects the class's natives and binds each by its name. JNA's own classes
    // (Native calls its own overloads) bind theirs through JNI as usual.
    let jna_direct_mapping = !class_name.starts_with("com/sun/jna/")
        && layout.references_method(b"com/sun/jna/Native", b"register");
    let mut planned = Vec::new();
    let mut skipped = Vec::new();
    for (index, method) in layout.methods.iter().enumerate() {
        if method.access & ACC_NATIVE == 0 {
            continue;
        }
        let name_raw = layout.utf8(method.name_index)?;
        let desc_raw = layout.utf8(method.descriptor_index)?;
        let is_static = method.access & ACC_STATIC != 0;
        let shape = descriptor::parse_method(desc_raw, is_static)?;
        let facts = native_facts(&layout, method, jna_direct_mapping)?;
        let reference = NativeMethodRef {
            class: class_name.clone(),
            name: mutf8::decode(name_raw),
            descriptor: mutf8::decode(desc_raw),
        };
        let structural = if layout.is_interface() {
            Some(reason::INTERFACE)
        } else if name_raw.first() == Some(&b'<') {
            Some(reason::INITIALIZER)
        } else if name_raw.starts_with(&prefix) {
            Some(reason::ALREADY_PREFIXED)
        } else if is_owner && (name_raw == begin_native || name_raw == end_native) {
            Some(reason::HELPER_NATIVE)
        } else if prefix.len() + name_raw.len() > u16::MAX as usize {
            Some(reason::NAME_TOO_LONG)
        } else if prefixed_names.iter().any(|&(n, d)| {
            d == desc_raw && n.len() == prefix.len() + name_raw.len() && n.ends_with(name_raw)
        }) {
            Some(reason::NAME_TAKEN)
        } else {
            None
        };
        let decision = match structural {
            Some(why) => Decision::Skip(why),
            None => config.policy.decide(&reference, &facts),
        };
        match decision {
            Decision::Wrap => planned.push(Planned {
                method: index,
                reference,
                shape,
                strip_intrinsic: facts.intrinsic_candidate
                    && !config
                        .policy
                        .keeps_intrinsic_annotation(&class_name, &mutf8::decode(name_raw)),
            }),
            Decision::Skip(why) => skipped.push(SkippedNative {
                method: reference,
                reason: why.to_string(),
            }),
        }
    }
    if planned.is_empty() && !inject {
        return Ok(Outcome::Unchanged { skipped });
    }

    check_config(config)?;
    let added_methods = planned.len() + if inject { 4 } else { 0 };
    let method_count = u16::try_from(layout.methods.len() + added_methods)
        .map_err(|_| RewriteError::LimitExceeded("more than 65535 methods"))?;

    let mut pool = PoolBuilder::new(&layout);
    let owner = mutf8::encode(&helper.owner);
    let refs = CommonRefs {
        begin: pool.methodref(&owner, &begin_name, INT_VOID)?,
        end: pool.methodref(&owner, &end_name, INT_VOID)?,
        code_name: pool.utf8(b"Code")?,
        stack_map: if layout.major >= 50 {
            Some((
                pool.utf8(b"StackMapTable")?,
                pool.class(b"java/lang/Throwable")?,
            ))
        } else {
            None
        },
    };

    // Wrappers, in method order, each remembered by its byte range in `wrappers`.
    let mut wrappers = Vec::with_capacity(planned.len() * 64);
    let mut wrapper_ranges: Vec<(usize, usize, usize)> = Vec::with_capacity(planned.len());
    let mut renamed = Vec::with_capacity(planned.len() * 8);
    let mut wrapped = Vec::with_capacity(planned.len());
    for plan in planned {
        let method = &layout.methods[plan.method];
        let is_static = method.access & ACC_STATIC != 0;
        let id = assign_id(&plan.reference);
        let renamed_name = concat(&prefix, layout.utf8(method.name_index)?);
        let renamed_ref =
            pool.methodref_by_index(layout.this_class, &renamed_name, method.descriptor_index)?;
        let renamed_name_index = pool.utf8(&renamed_name)?;

        renamed.put_u16(ACC_PRIVATE | ACC_SYNTHETIC | ACC_NATIVE | (method.access & ACC_STATIC));
        renamed.put_u16(renamed_name_index);
        renamed.put_u16(method.descriptor_index);
        renamed.put_u16(0);

        let start = wrappers.len();
        wrappers.put_u16(method.access & !ACC_NATIVE);
        wrappers.put_u16(method.name_index);
        wrappers.put_u16(method.descriptor_index);
        let count_at = wrappers.len();
        wrappers.put_u16(0);
        wrap::write_wrapper_code(
            &mut wrappers,
            &plan.shape,
            is_static,
            id,
            renamed_ref,
            &refs,
            &mut pool,
        )?;
        let mut attribute_count: u16 = 1;
        for attr in &method.attributes {
            if plan.strip_intrinsic && annotations::is_annotations_attribute(&layout, attr) {
                if annotations::write_without(&mut wrappers, &layout, attr, INTRINSIC_CANDIDATE)? {
                    attribute_count += 1;
                }
            } else {
                wrappers.extend_from_slice(&bytes[attr.start..attr.end]);
                attribute_count += 1;
            }
        }
        wrappers[count_at..count_at + 2].copy_from_slice(&attribute_count.to_be_bytes());
        wrapper_ranges.push((plan.method, start, wrappers.len()));
        wrapped.push((plan.reference, id));
    }

    let mut injected_field = Vec::new();
    let mut injected_methods = Vec::new();
    if inject {
        let gate_name = mutf8::encode(&helper.gate_field);
        let gate_ref = pool.fieldref(class_raw, &gate_name, b"Z")?;
        let gate_name_index = pool.utf8(&gate_name)?;
        let bool_index = pool.utf8(b"Z")?;
        injected_field.put_u16(ACC_PRIVATE | ACC_STATIC | ACC_VOLATILE | ACC_SYNTHETIC);
        injected_field.put_u16(gate_name_index);
        injected_field.put_u16(bool_index);
        injected_field.put_u16(0);

        let int_void = pool.utf8(INT_VOID)?;
        for (helper_name, native_name) in [(&begin_name, &begin_native), (&end_name, &end_native)] {
            let native_ref = pool.methodref_by_index(layout.this_class, native_name, int_void)?;
            let helper_index = pool.utf8(helper_name)?;
            let native_index = pool.utf8(native_name)?;
            wrap::write_gated_helper(
                &mut injected_methods,
                ACC_PROTECTED | ACC_STATIC | ACC_SYNTHETIC,
                helper_index,
                int_void,
                gate_ref,
                native_ref,
                &refs,
            );
            injected_methods.put_u16(ACC_PRIVATE | ACC_STATIC | ACC_NATIVE | ACC_SYNTHETIC);
            injected_methods.put_u16(native_index);
            injected_methods.put_u16(int_void);
            injected_methods.put_u16(0);
        }
    }

    let cp_count = pool.count()?;
    let mut out = Vec::with_capacity(
        bytes.len()
            + pool.appended.len()
            + wrappers.len()
            + renamed.len()
            + injected_field.len()
            + injected_methods.len(),
    );
    out.extend_from_slice(&bytes[..8]);
    out.put_u16(cp_count);
    out.extend_from_slice(&bytes[10..layout.cp_end]);
    out.extend_from_slice(&pool.appended);
    out.extend_from_slice(&bytes[layout.cp_end..layout.fields_start]);
    if inject {
        let fields = layout
            .fields_count
            .checked_add(1)
            .ok_or(RewriteError::LimitExceeded("more than 65535 fields"))?;
        out.put_u16(fields);
        out.extend_from_slice(&bytes[layout.fields_start + 2..layout.methods_start]);
        out.extend_from_slice(&injected_field);
    } else {
        out.extend_from_slice(&bytes[layout.fields_start..layout.methods_start]);
    }
    out.put_u16(method_count);
    let mut next_wrapper = wrapper_ranges.iter().peekable();
    for (index, method) in layout.methods.iter().enumerate() {
        match next_wrapper.peek() {
            Some(&&(wrapped_index, start, end)) if wrapped_index == index => {
                out.extend_from_slice(&wrappers[start..end]);
                next_wrapper.next();
            }
            _ => out.extend_from_slice(&bytes[method.start..method.end]),
        }
    }
    out.extend_from_slice(&renamed);
    out.extend_from_slice(&injected_methods);
    out.extend_from_slice(&bytes[layout.methods_end..]);
    Ok(Outcome::Rewritten {
        bytes: out,
        wrapped,
        skipped,
    })
}
