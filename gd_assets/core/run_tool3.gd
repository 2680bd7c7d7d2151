extends Node

# The Godot 3 twin of run_tool4.gd (same requests, same markers), added by `gd-assets verify --run` as the
# first autoload of a scratch copy of the original project, so the original runs in the engine it was
# written for beside its migrated copy. Positions are Node2D.position, Control.rect_position and
# Spatial.translation: what Godot 4 calls `position` on each. The `play` mode (rendered, with input) writes
# frames and a trace that read Godot 3's names as Godot 4 does, so the two files compare line for line.

const MARK = "@@gd-run"
const SNAPSHOT_EVERY = 60

var _mode = "main"
var _frames = 600
var _scene_frames = 30
var _scenes = []
var _frame = 0
var _index = -1
var _current = null
var _left = 0
var _last_tree = []
var _done = false
var _starting = false  # the next scene is on its way (deferred)
# play mode: frames and trace written to _shots, input events by physics frame
var _shots = ""
var _shot_every = 60
var _trace_every = 10
var _shot_width = 640
var _burst = 0
var _events = {}
var _physics = 0
var _trace_file = null
var _scene_id = -1
var _shot_at = {}
var _clicked = null


func _say(parts):
	var words = PoolStringArray()
	for p in parts:
		words.append(str(p))
	printerr(MARK + " " + words.join("\t"))


func _init():
	pause_mode = Node.PAUSE_MODE_PROCESS
	process_priority = -1000000
	var file = File.new()
	var text = ""
	if file.open(OS.get_environment("GD_RUN_REQUESTS"), File.READ) == OK:
		text = file.get_as_text()
		file.close()
	var seed_value = ""
	for line in text.split("\n", false):
		var parts = line.split("\t")
		match parts[0]:
			"mode": _mode = parts[1]
			"frames": _frames = int(parts[1])
			"scene_frames": _scene_frames = int(parts[1])
			"seed": seed_value = parts[1]
			"scene": _scenes.append(parts[1])
			"shots": _shots = parts[1]
			"shot_every": _shot_every = int(parts[1])
			"trace_every": _trace_every = int(parts[1])
			"burst": _burst = int(parts[1])
			"shot_width": _shot_width = int(parts[1])
			"event":
				var at = int(parts[1])
				if not _events.has(at):
					_events[at] = []
				_events[at].append([parts[2], parts[3] if parts.size() > 3 else ""])
	if _shots != "":
		_trace_file = File.new()
		if _trace_file.open(_shots + "/trace.tsv", File.WRITE) != OK:
			_trace_file = null
	if seed_value != "":  # no seed asked: the engine's own start
		seed(int(seed_value))
	_say(["BEGIN", _mode])


func _position(node):
	if node is Node2D:
		return "%d,%d" % [round(node.position.x), round(node.position.y)]
	if node is Control:
		return "%d,%d" % [round(node.rect_position.x), round(node.rect_position.y)]
	if node is Spatial:
		return "%.2f,%.2f,%.2f" % [node.translation.x, node.translation.y, node.translation.z]
	return ""


func _visible(node):
	if node is CanvasItem or node is Spatial:
		return "1" if node.visible else "0"
	return ""


func _walk(node, path, out):
	for child in node.get_children():
		if child == self:
			continue
		var own = path + "/" + child.name if path != "" else child.name
		var script = child.get_script()
		var script_path = script.resource_path if script != null else ""
		var words = PoolStringArray(["NODE", own, child.get_class(), script_path, _visible(child), _position(child)])
		out.append(words.join("\t"))
		_walk(child, own, out)


func _tree():
	var out = []
	_walk(get_tree().root, "", out)
	return out


func _print_tree(lines, frame):
	_say(["TREE", frame, lines.size()])
	for line in lines:
		printerr(MARK + " " + line)


func _process(_delta):
	if _done:
		return
	_frame += 1
	if _mode == "play":
		_play_frame()
		return
	if _mode == "main":
		if _frame % SNAPSHOT_EVERY == 0:
			_last_tree = _tree()
		if _frame >= _frames:
			_done = true
			_print_tree(_tree(), _frame)
			_say(["DONE", _frame])
			get_tree().quit()
		return
	if _starting:
		return
	if _current != null:
		_left -= 1
		if _left > 0:
			return
		if is_instance_valid(_current):
			_current.free()
		_say(["END", "scene", _scenes[_index]])
		_current = null
	# the next scene enters after this frame's processing, as a game's own scene change does: nodes
	# made while the engine is still processing can land where the freed ones were and be skipped
	_starting = true
	call_deferred("_start_next_scene")


func _start_next_scene():
	_starting = false
	_index += 1
	if _index >= _scenes.size():
		_done = true
		_say(["DONE", _frame])
		get_tree().quit()
		return
	var path = _scenes[_index]
	_say(["BEGIN", "scene", path])
	var packed = ResourceLoader.load(path)
	if packed is PackedScene:
		_current = packed.instance()
	if _current == null:
		_say(["END", "scene", path, "fail"])
		return
	get_tree().root.add_child(_current)
	_left = _scene_frames


func _exit_tree():
	if _done:
		return
	_say(["QUIT", _frame])
	if _mode == "main":
		_print_tree(_last_tree, _frame - _frame % SNAPSHOT_EVERY)


# --- play mode ---------------------------------------------------------------------------------------------


func _physics_process(_delta):
	if _mode != "play" or _done:
		return
	_physics += 1
	for event in _events.get(_physics, []):
		match event[0]:
			"press":
				if InputMap.has_action(event[1]):
					Input.action_press(event[1])
			"release":
				if InputMap.has_action(event[1]):
					Input.action_release(event[1])
			"click":
				_click(int(event[1]), true)
			"unclick":
				_click(int(event[1]), false)


func _buttons(node, out):
	# the buttons a player may press: not one that would end the game (its name or text says quit or exit)
	for child in node.get_children():
		if child is BaseButton and child.is_visible_in_tree() and not child.disabled:
			var words = (child.name + " " + str(child.get("text"))).to_lower()
			if not ("quit" in words or "exit" in words):
				out.append(child)
		_buttons(child, out)


func _click(index, pressed):
	# the index-th visible button in tree order (the same in both engines where the trees agree), pressed at
	# its centre in window coordinates; released where it was pressed
	var at = _clicked
	if pressed:
		var found = []
		_buttons(get_tree().root, found)
		if found.empty():
			return
		var button = found[index % found.size()]
		var canvas = button.get_global_transform_with_canvas().xform(button.rect_size / 2)
		at = button.get_viewport().get_final_transform().xform(canvas)
		_clicked = at
	if at == null:
		return
	var event = InputEventMouseButton.new()
	event.button_index = BUTTON_LEFT
	event.pressed = pressed
	event.position = at
	event.global_position = at
	Input.parse_input_event(event)


func _play_frame():
	var scene = get_tree().current_scene
	var id = scene.get_instance_id() if scene != null else 0
	if id != _scene_id:
		_scene_id = id
		_shot_at[_frame + 30] = true  # a new scene, once it has settled
	if _trace_every > 0 and _frame % _trace_every == 0:
		_write_trace()
	var shoot = _shots != "" and _kept(_frame)
	var near = false
	for d in range(1, _burst + 1):
		near = near or (_shots != "" and not shoot and (_kept(_frame - d) or (_kept(_frame + d) and _frame + d <= _frames)))
	if _frame >= _frames:
		_done = true
	if shoot or near:
		_shoot(_frame, "f" if shoot else "b")
	elif _done:
		_finish()


func _kept(frame):
	return frame > 0 and (frame % _shot_every == 0 or _shot_at.has(frame))


func _shoot(frame, kind):
	yield(VisualServer, "frame_post_draw")
	var image = get_viewport().get_texture().get_data()
	image.flip_y()
	if image.get_width() > _shot_width:
		image.resize(_shot_width, max(1, round(image.get_height() * _shot_width / float(image.get_width()))),
			Image.INTERPOLATE_BILINEAR)
	image.save_png(_shots + "/%s%06d.png" % [kind, frame])
	if _done:
		_finish()


func _finish():
	if _trace_file != null:
		_trace_file.close()
	_say(["DONE", _frame])
	get_tree().quit()


func _clean(text):
	return str(text).replace("\t", " ").replace("\n", " ").replace("\r", " ").substr(0, 120)


func _font(node):
	# kind and size of the font a text control draws with: a DynamicFont's size, else the font's height
	var font = node.get_font("normal_font" if node is RichTextLabel else "font")
	if font == null:
		return ""
	if font is DynamicFont:
		return "size:%d" % font.size
	if font.resource_path == "" and font is BitmapFont:
		return "default:%d" % font.get_height()
	return "height:%d" % font.get_height()


func _canvas_rect(node):
	var rect = null
	if node is Control:
		rect = Rect2(Vector2(), node.rect_size)
	elif node is Sprite and node.texture != null:
		rect = node.get_rect()
	if rect == null:
		return ""
	var xf = node.get_global_transform_with_canvas()
	var box = Rect2(xf.xform(rect.position), Vector2())
	for corner in [rect.position + Vector2(rect.size.x, 0), rect.position + Vector2(0, rect.size.y), rect.end]:
		box = box.expand(xf.xform(corner))
	return "%.1f,%.1f,%.1f,%.1f" % [box.position.x, box.position.y, box.size.x, box.size.y]


func _trace_node(node, path):
	var cls = node.get_class()
	var visible = ""
	var where = ""
	var turn = ""
	var size = ""
	if node is Node2D:
		visible = "1" if node.is_visible_in_tree() else "0"
		where = "%.2f,%.2f" % [node.global_position.x, node.global_position.y]
		turn = "%.4f" % node.global_rotation
		size = "%.4f,%.4f" % [node.global_scale.x, node.global_scale.y]
	elif node is Control:
		visible = "1" if node.is_visible_in_tree() else "0"
		where = "%.2f,%.2f" % [node.rect_global_position.x, node.rect_global_position.y]
		turn = "%.4f" % deg2rad(node.rect_rotation)
		size = "%.4f,%.4f" % [node.rect_scale.x, node.rect_scale.y]
	elif node is Spatial:
		visible = "1" if node.is_visible_in_tree() else "0"
		var o = node.global_transform.origin
		where = "%.3f,%.3f,%.3f" % [o.x, o.y, o.z]
	else:
		return ""
	var text = ""
	var font = ""
	if node is Label or node is Button or node is LineEdit or node is RichTextLabel:
		text = _clean(node.text)
		font = _font(node)
		if node is Label or node is RichTextLabel:
			if node.visible_characters >= 0:
				text = _clean(node.text.substr(0, node.visible_characters))
	var anim = ""
	if node is AnimatedSprite:
		anim = "%s:%d" % [node.animation, node.frame]
	elif node is AnimationPlayer:
		anim = node.current_animation
	var velocity = ""
	if node is RigidBody2D:
		velocity = "%.2f,%.2f" % [node.linear_velocity.x, node.linear_velocity.y]
	var script = node.get_script()
	var fields = PoolStringArray(["N", path, cls, visible, where, turn, size, _canvas_rect(node), text, font, anim, velocity,
		script.resource_path if script != null else ""])
	return fields.join("\t")


func _trace_walk(node, path, out):
	for child in node.get_children():
		if child == self or out.size() >= 4000:
			continue
		var own = path + "/" + child.name if path != "" else child.name
		var line = _trace_node(child, own)
		if line != "":
			out.append(line)
		_trace_walk(child, own, out)


func _write_trace():
	if _trace_file == null:
		return
	var scene = get_tree().current_scene
	var size = get_viewport().get_visible_rect().size
	_trace_file.store_line(PoolStringArray(["F", str(_frame), scene.filename if scene != null else "",
		"%.1f,%.1f" % [size.x, size.y]]).join("\t"))
	var out = []
	_trace_walk(get_tree().root, "", out)
	for line in out:
		_trace_file.store_line(line)
